import type { UsageQuery, UsageRow } from '../../clickhouse/queries/meter-usage.js'
import { D } from '../pricing/index.js'
import type { Meter } from './meter.entity.js'
import { roundQuantity } from './rounding.js'
import type { UsageReader } from './usage-reader.js'

/**
 * A usage row's value as shown: AVG reads come back as a sum and a count, divided here; then the
 * meter's rounding, as the usage API applies it.
 */
export function meterValue(meter: Pick<Meter, 'aggregation' | 'rounding'>, value: string, count: string): string {
  const v = meter.aggregation.type === 'AVG' ? (count === '0' ? '0' : D(value).div(count).toFixed()) : value
  return roundQuantity(v, meter.rounding)
}

/**
 * One row per customer of `customers` with usage (row.customer set). WEIGHTED_SUM reads have no
 * customer dimension, so they are read customer by customer.
 */
export async function usageByCustomer(read: UsageReader, q: UsageQuery, customers: string[]): Promise<UsageRow[]> {
  if (customers.length === 0) return []
  if (q.aggregation !== 'WEIGHTED_SUM') return read({ ...q, externalCustomerIds: customers, byCustomer: true })
  const out: UsageRow[] = []
  for (const customer of customers) {
    for (const r of await read({ ...q, externalCustomerId: customer })) if (r.event_count !== '0') out.push({ ...r, customer })
  }
  return out
}
