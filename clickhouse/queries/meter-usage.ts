// SQL for meter usage reads. Buckets are computed at read time from the deduplicated
// per-event meter rows (FINAL), so a replayed event can never change a result.
import { chDateTime, type ClickHouse } from '../client.js'

export type UsageAggregation = 'SUM' | 'COUNT' | 'COUNT_UNIQUE' | 'MAX' | 'LATEST' | 'AVG'
export type WindowSize = 'MINUTE' | 'HOUR' | 'DAY'

export interface UsageQuery {
  tenantId: string
  environmentId: string
  meterId: string
  aggregation: UsageAggregation
  externalCustomerId?: string
  /** several customers pooled into one result (a parent subscription with its inherited children) */
  externalCustomerIds?: string[]
  start: Date
  end: Date
  windowSize?: WindowSize
  groupBy?: string[]
}

export interface UsageRow {
  window_start?: string
  value: string
  /** AVG only: the sum the average is taken of (value is then the sum too, divided by the caller) */
  event_count: string
  groups: Record<string, string>
}

export const VALUE_EXPR: Record<UsageAggregation, string> = {
  SUM: 'toString(sum(value))',
  COUNT: 'toString(count())',
  COUNT_UNIQUE: 'toString(uniqExact(value_text))',
  MAX: 'toString(max(value))',
  LATEST: 'toString(argMax(value, (timestamp, event_id)))',
  // Exact average: the caller divides this sum by event_count with decimal.js.
  AVG: 'toString(sum(value))',
}

export function buildUsageSql(table: string, q: UsageQuery): { sql: string; params: Record<string, unknown> } {
  const params: Record<string, unknown> = {
    tenant: q.tenantId,
    env: q.environmentId,
    meter: q.meterId,
    start: chDateTime(q.start.getTime()),
    end: chDateTime(q.end.getTime()),
  }
  const select = [`${VALUE_EXPR[q.aggregation]} AS value`, 'toString(count()) AS event_count']
  const groupBy: string[] = []
  if (q.windowSize) {
    select.unshift(`toString(toStartOfInterval(timestamp, INTERVAL 1 ${q.windowSize})) AS window_start`)
    groupBy.push('window_start')
  }
  ;(q.groupBy ?? []).forEach((key, i) => {
    params[`g${i}`] = key
    // Strings group by their value, other JSON values by their JSON text (5, true, {...}).
    select.push(`if(JSONType(properties, {g${i}:String}) = 'String', JSONExtractString(properties, {g${i}:String}), JSONExtractRaw(properties, {g${i}:String})) AS g${i}`)
    groupBy.push(`g${i}`)
  })
  const where = [
    'tenant_id = {tenant:String}',
    'environment_id = {env:String}',
    'meter_id = {meter:String}',
    "timestamp >= {start:DateTime64(3, 'UTC')}",
    "timestamp < {end:DateTime64(3, 'UTC')}",
  ]
  if (q.externalCustomerId !== undefined) {
    params.customer = q.externalCustomerId
    where.push('external_customer_id = {customer:String}')
  }
  if (q.externalCustomerIds !== undefined) {
    params.customers = q.externalCustomerIds
    where.push('has({customers:Array(String)}, external_customer_id)')
  }
  let sql = `SELECT ${select.join(', ')} FROM ${table} FINAL WHERE ${where.join(' AND ')}`
  if (groupBy.length) sql += ` GROUP BY ${groupBy.join(', ')} ORDER BY ${groupBy.join(', ')}`
  return { sql, params }
}

export async function queryMeterUsage(ch: ClickHouse, q: UsageQuery): Promise<UsageRow[]> {
  const { sql, params } = buildUsageSql(ch.table('meter_usage'), q)
  const rows = await ch.query<Record<string, string>>(sql, params)
  return rows.map((r) => {
    const groups: Record<string, string> = {}
    ;(q.groupBy ?? []).forEach((key, i) => (groups[key] = r[`g${i}`]))
    return { window_start: r.window_start, value: r.value, event_count: r.event_count, groups }
  })
}
