import { D } from '../pricing/index.js'

/** A usage row's value as shown: AVG reads come back as a sum and a count, divided here. */
export const meterValue = (aggregation: string, value: string, count: string): string =>
  aggregation === 'AVG' ? (count === '0' ? '0' : D(value).div(count).toFixed()) : value
