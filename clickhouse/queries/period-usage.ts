// The usage of many customers and meters over one [start, end) in a single statement, for a
// billing run that invoices a batch of subscriptions sharing a period. Each (meter, customer)
// comes back three ways: its total, per event source and per value of the meter's declared
// group_by: the three reads an invoice line makes (quantity, usage_analytics, usage_breakdown).
// Same bucket-and-edge split as meter-usage.ts, so the answer is the same to the digit; the
// final values are computed by ClickHouse with the same functions.
import type { ClickHouse } from '../client.js'
import { rangeConditions } from './meter-usage.js'

export interface PeriodUsageQuery {
  tenantId: string
  environmentId: string
  /** meters of SUM, COUNT, AVG, MAX or LATEST (a distinct count cannot be split by source and added) */
  meterIds: string[]
  externalCustomerIds: string[]
  start: Date
  end: Date
}

export interface PeriodUsageRow {
  meter_id: string
  external_customer_id: string
  /** 'total', 'source' (by `source`) or 'group' (by `group_value`) */
  level: 'total' | 'source' | 'group'
  source: string
  group_value: string
  sum: string
  count: string
  max: string
  latest: string
}

// grouping(src, g) has a bit set for each column aggregated away (SQL standard order).
const LEVEL: Record<string, PeriodUsageRow['level']> = { '3': 'total', '1': 'source', '2': 'group' }

export function buildPeriodUsageSql(ch: ClickHouse, q: PeriodUsageQuery): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = { tenant: q.tenantId, env: q.environmentId, meters: q.meterIds, customers: q.externalCustomerIds }
  const scope = [
    'tenant_id = {tenant:String}', 'environment_id = {env:String}',
    'meter_id IN {meters:Array(String)}', 'external_customer_id IN {customers:Array(String)}',
  ]
  const keys = 'meter_id, external_customer_id AS cust, toString(source) AS src, group_values[1] AS g'
  const range = rangeConditions(q.start, q.end, params)
  const parts: string[] = []
  if (range.buckets) {
    parts.push(`SELECT ${keys}, sum(value_sum) AS s, sum(event_count) AS c, max(value_max) AS m, max(latest) AS l
      FROM ${ch.table('meter_buckets')}
      WHERE ${[...scope, range.buckets].join(' AND ')}
      GROUP BY meter_id, cust, src, g`)
  }
  if (range.edges) {
    // A crash replay may have written a row twice; LIMIT 1 BY keeps one.
    const rows = `SELECT * FROM ${ch.table('meter_events')} WHERE ${[...scope, range.edges].join(' AND ')} LIMIT 1 BY meter_id, event_id, timestamp`
    parts.push(`SELECT ${keys}, sum(value) AS s, count() AS c, max(value) AS m, max(tuple(timestamp, event_id, value)) AS l
      FROM (${rows}) GROUP BY meter_id, cust, src, g`)
  }
  const sql = `SELECT meter_id, cust AS external_customer_id, src AS source, g AS group_value, toString(grouping(src, g)) AS level,
      toString(sum(s)) AS sum, toString(sum(c)) AS count, toString(max(m)) AS max, toString(tupleElement(max(l), 3)) AS latest
    FROM (${parts.join(' UNION ALL ')})
    GROUP BY GROUPING SETS ((meter_id, cust), (meter_id, cust, src), (meter_id, cust, g))`
  return { sql, params }
}

export async function queryPeriodUsage(ch: ClickHouse, q: PeriodUsageQuery): Promise<PeriodUsageRow[]> {
  if (q.meterIds.length === 0 || q.externalCustomerIds.length === 0) return []
  const { sql, params } = buildPeriodUsageSql(ch, q)
  const rows = await ch.query<Omit<PeriodUsageRow, 'level'> & { level: string }>(sql, params)
  return rows.map((r) => ({ ...r, level: LEVEL[r.level] }))
}
