// SQL for meter usage reads. Whole minutes come from meter_buckets (partial aggregate states);
// the partial minutes at either edge of [start, end) come from the per-event rows of
// meter_events, so any boundary, to the millisecond, gives the exact raw-event answer.
// group_by on a property the meter does not declare reads meter_events joined with events_raw
// for the properties (the raw path). No read uses FINAL.
import { chDateTime, type ClickHouse } from '../client.js'

export type UsageAggregation = 'SUM' | 'COUNT' | 'COUNT_UNIQUE' | 'MAX' | 'LATEST' | 'AVG'
export type WindowSize = 'MINUTE' | 'HOUR' | 'DAY'

export interface UsageQuery {
  tenantId: string
  environmentId: string
  meterId: string
  /** WEIGHTED_SUM is read by weighted-usage.ts */
  aggregation: UsageAggregation | 'WEIGHTED_SUM'
  /** the meter's declared group_by property: grouping by it reads the buckets */
  declaredGroupBy?: string | null
  externalCustomerId?: string
  /** several customers pooled into one result (a parent subscription with its inherited children) */
  externalCustomerIds?: string[]
  start: Date
  end: Date
  windowSize?: WindowSize
  groupBy?: string[]
  /** one row per event source */
  bySource?: boolean
  /** one row per customer (analytics, exports, alert checks over many customers) */
  byCustomer?: boolean
}

export interface UsageRow {
  window_start?: string
  value: string
  /** AVG: value is the sum; the caller divides it by event_count */
  event_count: string
  groups: Record<string, string>
  source?: string
  customer?: string
}

const BUCKET_MS = 60_000

/** Final value of each aggregation over the merged partials s, c, m, l, u. */
const FINAL_VALUE: Record<UsageAggregation, string> = {
  SUM: 'toString(sum(s))',
  AVG: 'toString(sum(s))',
  COUNT: 'toString(sum(c))',
  MAX: 'toString(max(m))',
  LATEST: 'toString(tupleElement(max(l), 3))',
  COUNT_UNIQUE: 'toString(length(groupUniqArrayArray(u)))',
}

/**
 * The one partial each aggregation needs besides the count, as read from buckets and from edge
 * rows. Reading only that column matters: the latest tuple and the distinct sets are the widest
 * columns of meter_buckets, and a month's read touches thousands of bucket rows.
 */
const PARTIAL: Record<UsageAggregation, { bucket: string; event: string } | null> = {
  SUM: { bucket: 'sum(value_sum) AS s', event: 'sum(value) AS s' },
  AVG: { bucket: 'sum(value_sum) AS s', event: 'sum(value) AS s' },
  COUNT: null,
  MAX: { bucket: 'max(value_max) AS m', event: 'max(value) AS m' },
  LATEST: { bucket: 'max(latest) AS l', event: 'max(tuple(timestamp, event_id, value)) AS l' },
  COUNT_UNIQUE: { bucket: 'groupUniqArrayArray(uniq) AS u', event: 'groupUniqArray(value_text) AS u' },
}

/** Raw-path value expressions over meter_events rows. */
export const VALUE_EXPR: Record<UsageAggregation, string> = {
  SUM: 'toString(sum(value))',
  COUNT: 'toString(count())',
  COUNT_UNIQUE: 'toString(uniqExact(value_text))',
  MAX: 'toString(max(value))',
  LATEST: 'toString(argMax(value, (timestamp, event_id)))',
  AVG: 'toString(sum(value))',
}

const propertyExpr = (i: number) =>
  `if(JSONType(properties, {g${i}:String}) = 'String', JSONExtractString(properties, {g${i}:String}), JSONExtractRaw(properties, {g${i}:String}))`

/** The whole-bucket interior [a, b) and the edge ranges of [start, end). */
export function splitRange(start: Date, end: Date): { interior: [number, number] | null; edges: [number, number][] } {
  const s = start.getTime()
  const e = end.getTime()
  const a = Math.ceil(s / BUCKET_MS) * BUCKET_MS
  const b = Math.floor(e / BUCKET_MS) * BUCKET_MS
  if (a >= b) return { interior: null, edges: [[s, e]] }
  const edges: [number, number][] = []
  if (s < a) edges.push([s, a])
  if (b < e) edges.push([b, e])
  return { interior: [a, b], edges }
}

/**
 * The conditions of the bucket-and-edge split of [start, end), their parameters set in `params`:
 * whole minutes on meter_buckets.bucket_start, the partial edge minutes on meter_events.timestamp.
 */
export function rangeConditions(start: Date, end: Date, params: Record<string, unknown>): { buckets: string | null; edges: string | null } {
  const { interior, edges } = splitRange(start, end)
  let buckets: string | null = null
  if (interior) {
    params.a = chDateTime(interior[0]).slice(0, 19)
    params.b = chDateTime(interior[1]).slice(0, 19)
    buckets = "bucket_start >= {a:DateTime('UTC')} AND bucket_start < {b:DateTime('UTC')}"
  }
  const ranges = edges.map(([s, e], i) => {
    params[`es${i}`] = chDateTime(s)
    params[`ee${i}`] = chDateTime(e)
    return `(timestamp >= {es${i}:DateTime64(3, 'UTC')} AND timestamp < {ee${i}:DateTime64(3, 'UTC')})`
  })
  return { buckets, edges: ranges.length ? `(${ranges.join(' OR ')})` : null }
}

export function buildUsageSql(ch: ClickHouse, q: UsageQuery): { sql: string; params: Record<string, unknown> } {
  const agg = q.aggregation
  if (agg === 'WEIGHTED_SUM') throw new Error('WEIGHTED_SUM usage is read by weighted-usage.ts')
  const params: Record<string, unknown> = { tenant: q.tenantId, env: q.environmentId, meter: q.meterId }
  const groupBy = q.groupBy ?? []
  groupBy.forEach((key, i) => (params[`g${i}`] = key))
  const scope = ['tenant_id = {tenant:String}', 'environment_id = {env:String}', 'meter_id = {meter:String}']
  if (q.externalCustomerId !== undefined) {
    params.customer = q.externalCustomerId
    scope.push('external_customer_id = {customer:String}')
  }
  if (q.externalCustomerIds !== undefined) {
    params.customers = q.externalCustomerIds
    scope.push('has({customers:Array(String)}, external_customer_id)')
  }
  const windowOf = (col: string) => `toString(toDateTime(toStartOfInterval(${col}, INTERVAL 1 ${q.windowSize}), 'UTC'))`
  const rawPath = groupBy.length > 0 && !groupBy.every((g) => g === q.declaredGroupBy)
  const dims = (side: 'bucket' | 'event') => {
    const out: string[] = []
    if (q.windowSize) out.push(`${windowOf(side === 'bucket' ? 'bucket_start' : 'timestamp')} AS window_start`)
    groupBy.forEach((_, i) => out.push(`${rawPath ? propertyExpr(i) : 'group_values[1]'} AS g${i}`))
    if (q.bySource) out.push('toString(source) AS src')
    if (q.byCustomer) out.push('external_customer_id AS cust')
    return out
  }
  const dimNames = [
    ...(q.byCustomer ? ['cust'] : []), ...(q.windowSize ? ['window_start'] : []), ...groupBy.map((_, i) => `g${i}`), ...(q.bySource ? ['src'] : []),
  ]
  const groupClause = (extra: string[]) => (dimNames.length || extra.length ? ` GROUP BY ${[...dimNames, ...extra].join(', ')}` : '')
  const tail = dimNames.length ? ` GROUP BY ${dimNames.join(', ')} ORDER BY ${dimNames.join(', ')}` : ''

  if (rawPath) {
    // The properties live in events_raw only: join them to the selected meter rows by the
    // event's identity (event_id, timestamp).
    params.start = chDateTime(q.start.getTime())
    params.end = chDateTime(q.end.getTime())
    const where = [...scope, "timestamp >= {start:DateTime64(3, 'UTC')}", "timestamp < {end:DateTime64(3, 'UTC')}"].join(' AND ')
    const select = [...dims('event'), `${VALUE_EXPR[agg]} AS value`, 'toString(count()) AS event_count']
    const props = `SELECT event_id, timestamp, any(properties) AS properties FROM ${ch.table('events_raw')}
       WHERE tenant_id = {tenant:String} AND environment_id = {env:String}
         AND event_id IN (SELECT event_id FROM ${ch.table('meter_events')} WHERE ${where}) GROUP BY event_id, timestamp`
    const rows = `SELECT * FROM ${ch.table('meter_events')} WHERE ${where} LIMIT 1 BY event_id, timestamp`
    return { sql: `SELECT ${select.join(', ')} FROM (${rows}) AS m INNER JOIN (${props}) AS r USING (event_id, timestamp)${tail}`, params }
  }

  const range = rangeConditions(q.start, q.end, params)
  const partial = PARTIAL[agg]
  const parts: string[] = []
  if (range.buckets) {
    const select = [...dims('bucket'), 'sum(event_count) AS c', ...(partial ? [partial.bucket] : [])]
    const where = [...scope, range.buckets]
    parts.push(`SELECT ${select.join(', ')} FROM ${ch.table('meter_buckets')} WHERE ${where.join(' AND ')}${groupClause([])}`)
  }
  if (range.edges) {
    const select = [...dims('event'), 'count() AS c', ...(partial ? [partial.event] : [])]
    const where = [...scope, range.edges]
    // A crash replay may have written a row twice; LIMIT 1 BY keeps one (cheaper than FINAL here).
    const rows = `SELECT * FROM ${ch.table('meter_events')} WHERE ${where.join(' AND ')} LIMIT 1 BY event_id, timestamp`
    parts.push(`SELECT ${select.join(', ')} FROM (${rows})${groupClause([])}`)
  }
  const select = [...dimNames, `${FINAL_VALUE[agg]} AS value`, 'toString(sum(c)) AS event_count']
  return { sql: `SELECT ${select.join(', ')} FROM (${parts.join(' UNION ALL ')})${tail}`, params }
}

export async function queryMeterUsage(ch: ClickHouse, q: UsageQuery): Promise<UsageRow[]> {
  const { sql, params } = buildUsageSql(ch, q)
  const rows = await ch.query<Record<string, string>>(sql, params)
  return rows.map((r) => {
    const groups: Record<string, string> = {}
    ;(q.groupBy ?? []).forEach((key, i) => (groups[key] = r[`g${i}`]))
    return { window_start: r.window_start, value: r.value, event_count: r.event_count, groups, source: r.src, customer: r.cust }
  })
}

export interface LateUsageQuery {
  tenantId: string
  environmentId: string
  externalCustomerIds: string[]
  start: Date
  end: Date
  /** events acknowledged at or after this instant are late (usually the period's end) */
  acknowledgedSince: Date
}

/**
 * The customers with usage in [start, end) that was acknowledged (ingested_at) at or after
 * `acknowledgedSince`: backdated events that a draft computed at the period's end may not
 * hold. One statement; the finalization recomputes only the drafts it names.
 */
export async function queryLateUsageCustomers(ch: ClickHouse, q: LateUsageQuery): Promise<string[]> {
  if (q.externalCustomerIds.length === 0) return []
  const rows = await ch.query<{ c: string }>(
    `SELECT DISTINCT external_customer_id AS c FROM ${ch.table('meter_events')}
      WHERE tenant_id = {tenant:String} AND environment_id = {env:String} AND external_customer_id IN {customers:Array(String)}
        AND timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')} AND ingested_at >= {since:DateTime64(3, 'UTC')}`,
    {
      tenant: q.tenantId, env: q.environmentId, customers: q.externalCustomerIds,
      start: chDateTime(q.start.getTime()), end: chDateTime(q.end.getTime()), since: chDateTime(q.acknowledgedSince.getTime()),
    },
  )
  return rows.map((r) => r.c)
}

export interface LateUsageSpansQuery {
  tenantId: string
  environmentId: string
  externalCustomerIds: string[]
  /** usage dated in [from, before): from the start of the earliest closed period to the start of the periods being billed now */
  from: Date
  before: Date
  /** acknowledged (ingested_at) at or after this instant */
  acknowledgedSince: Date
}

/**
 * Per customer, the first and last event time of usage dated before `before` and acknowledged
 * at or after `acknowledgedSince`: which closed periods late usage may have changed (billing
 * recomputes only those, late-adjustments.ts). One statement.
 */
export async function queryLateUsageSpans(ch: ClickHouse, q: LateUsageSpansQuery): Promise<{ customer: string; first: Date; last: Date }[]> {
  if (q.externalCustomerIds.length === 0) return []
  const rows = await ch.query<{ c: string; first_ms: string; last_ms: string }>(
    `SELECT external_customer_id AS c, toString(toUnixTimestamp64Milli(min(timestamp))) AS first_ms, toString(toUnixTimestamp64Milli(max(timestamp))) AS last_ms
       FROM ${ch.table('meter_events')}
      WHERE tenant_id = {tenant:String} AND environment_id = {env:String} AND external_customer_id IN {customers:Array(String)}
        AND timestamp >= {from:DateTime64(3, 'UTC')} AND timestamp < {before:DateTime64(3, 'UTC')} AND ingested_at >= {since:DateTime64(3, 'UTC')}
      GROUP BY external_customer_id`,
    {
      tenant: q.tenantId, env: q.environmentId, customers: q.externalCustomerIds,
      from: chDateTime(q.from.getTime()), before: chDateTime(q.before.getTime()), since: chDateTime(q.acknowledgedSince.getTime()),
    },
  )
  return rows.map((r) => ({ customer: r.c, first: new Date(Number(r.first_ms)), last: new Date(Number(r.last_ms)) }))
}
