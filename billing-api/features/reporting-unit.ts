// Pure: usage as people read it. A feature's reporting_unit divides the meter's value by its
// conversion_rate (bytes -> GB with 1000000000); the quotient is rounded half-up to 12
// decimals, the precision of meter values, and has no trailing zeros.
import { D } from '../pricing/index.js'
import type { ReportingUnit } from './feature.entity.js'

export interface ReportedUsage {
  value: string
  unit: string
}

export function toReportingUnit(value: string, unit: ReportingUnit | null): ReportedUsage | null {
  if (!unit) return null
  const converted = D(value).div(unit.conversion_rate).toDecimalPlaces(12, D.ROUND_HALF_UP)
  return { value: converted.toFixed(), unit: converted.eq(1) ? unit.unit_singular : unit.unit_plural }
}

export const reportedUsageSchema = {
  type: ['object', 'null'],
  required: ['value', 'unit'],
  additionalProperties: false,
  properties: { value: { type: 'string' }, unit: { type: 'string' } },
} as const
