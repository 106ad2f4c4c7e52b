// SQL for invoice usage analytics: one meter's usage of some customers in [start, end), per event
// source (the `source` column of meter_usage). Same deduplicated rows (FINAL) and the same value
// expressions as the meter usage query, so the per-source values match a usage query's.
import { chDateTime, type ClickHouse } from '../client.js'
import { VALUE_EXPR, type UsageAggregation } from './meter-usage.js'

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

export function buildUsageBySourceSql(table: string, q: SourceUsageQuery): { sql: string; params: Record<string, unknown> } {
  return {
    sql: `SELECT source, ${VALUE_EXPR[q.aggregation]} AS value, toString(count()) AS event_count
            FROM ${table} FINAL
           WHERE tenant_id = {tenant:String} AND environment_id = {env:String} AND meter_id = {meter:String}
             AND has({customers:Array(String)}, external_customer_id)
             AND timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
           GROUP BY source ORDER BY source`,
    params: {
      tenant: q.tenantId, env: q.environmentId, meter: q.meterId, customers: q.externalCustomerIds,
      start: chDateTime(q.start.getTime()), end: chDateTime(q.end.getTime()),
    },
  }
}

export async function queryUsageBySource(ch: ClickHouse, q: SourceUsageQuery): Promise<SourceUsageRow[]> {
  const { sql, params } = buildUsageBySourceSql(ch.table('meter_usage'), q)
  return ch.query<SourceUsageRow>(sql, params)
}
