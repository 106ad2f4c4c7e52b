// Invoice usage analytics: one meter's usage of some customers in [start, end), per event
// source. The same bucket-and-edge read as every usage query, grouped by source.
import type { ClickHouse } from '../client.js'
import { queryMeterUsage, type UsageAggregation } from './meter-usage.js'

export interface SourceUsageQuery {
  tenantId: string
  environmentId: string
  meterId: string
  aggregation: UsageAggregation
  /** the customers the line bills (a parent subscription pools its children's usage) */
  externalCustomerIds: string[]
  start: Date
  end: Date
}

export interface SourceUsageRow {
  source: string
  /** AVG: the sum (the caller divides by event_count) */
  value: string
  event_count: string
}

export async function queryUsageBySource(ch: ClickHouse, q: SourceUsageQuery): Promise<SourceUsageRow[]> {
  const rows = await queryMeterUsage(ch, { ...q, bySource: true })
  return rows.map((r) => ({ source: r.source ?? '', value: r.value, event_count: r.event_count }))
}
