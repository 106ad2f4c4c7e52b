// WEIGHTED_SUM reads: a customer's value holds from its event until that customer's next event
// (ordered by timestamp, then event_id), and the usage over [start, end) is the integral of that
// step function divided by the range's length: a time-weighted average (e.g. GB stored over a
// month). Before a customer's first event its value is 0.
//
// The points come from the bucket-and-edge split of meter-usage.ts: the `points` of whole-minute
// buckets and the per-event rows of the partial edge minutes. The value holding at `start` is
// carried in from before it: the largest `latest` of the buckets before start's minute, and the
// events of start's own minute before start. ClickHouse integrates in Decimal256 (value x ms, exact);
// the caller divides by the length (weightedValue). Several customers add their averages up.
// A segment is attributed to the event that set its value, so per-source and per-declared-group
// reads split the integral exactly (the groups add up to the total). With windows, each window
// is the average over its own part of [start, end).
import { Decimal } from 'decimal.js'
import { chDateTime, type ClickHouse } from '../client.js'
import { rangeConditions, type UsageQuery, type UsageRow, type WindowSize } from './meter-usage.js'

export interface WeightedRow {
  /** the integral of value over time, in value x milliseconds (exact decimal string) */
  integral: string
  /** events in [start, end) (the carried-in one is not counted) */
  event_count: string
  source?: string
  group?: string
  /** with windows: the window's start ('YYYY-MM-DD hh:mm:ss', UTC) and its part of [start, end) */
  window_start?: string
  length_ms?: string
}

const MINUTE_MS = 60_000

export function buildWeightedUsageSql(ch: ClickHouse, q: UsageQuery): { sql: string; params: Record<string, unknown> } {
  if ((q.groupBy ?? []).length > 1 || (q.groupBy ?? []).some((g) => g !== q.declaredGroupBy)) throw new Error('WEIGHTED_SUM usage groups by the declared group_by only')
  const params: Record<string, unknown> = { tenant: q.tenantId, env: q.environmentId, meter: q.meterId }
  const scope = ['tenant_id = {tenant:String}', 'environment_id = {env:String}', 'meter_id = {meter:String}']
  if (q.externalCustomerId !== undefined) {
    params.customer = q.externalCustomerId
    scope.push('external_customer_id = {customer:String}')
  }
  if (q.externalCustomerIds !== undefined) {
    params.customers = q.externalCustomerIds
    scope.push('has({customers:Array(String)}, external_customer_id)')
  }
  const s = q.start.getTime()
  const e = q.end.getTime()
  params.s = chDateTime(s)
  params.e = chDateTime(e)
  const startMinute = Math.floor(s / MINUTE_MS) * MINUTE_MS
  params.sm = chDateTime(startMinute).slice(0, 19)
  params.smt = chDateTime(startMinute)
  const where = (...extra: string[]) => [...scope, ...extra].join(' AND ')
  const cols = 'external_customer_id AS cust, toString(source) AS src, if(empty(group_values), \'\', group_values[1]) AS g'

  const range = rangeConditions(q.start, q.end, params)
  const inRange: string[] = []
  if (range.buckets) {
    inRange.push(`SELECT ${cols}, p.1 AS ts, p.2 AS id, p.3 AS v FROM ${ch.table('meter_buckets')} ARRAY JOIN points AS p WHERE ${where(range.buckets)}`)
  }
  if (range.edges) {
    inRange.push(`SELECT ${cols}, timestamp AS ts, event_id AS id, value AS v FROM ${ch.table('meter_events')} WHERE ${where(range.edges)}`)
  }
  // The value holding at start, per customer: the latest point before it.
  const before = `SELECT cust, src, g, ts, id, v FROM (
      SELECT ${cols}, latest.1 AS ts, latest.2 AS id, latest.3 AS v FROM ${ch.table('meter_buckets')}
       WHERE ${where("bucket_start < {sm:DateTime('UTC')}")} AND latest.1 > toDateTime64(0, 3, 'UTC')
      UNION ALL
      SELECT ${cols}, timestamp AS ts, event_id AS id, value AS v FROM ${ch.table('meter_events')}
       WHERE ${where("timestamp >= {smt:DateTime64(3, 'UTC')}", "timestamp < {s:DateTime64(3, 'UTC')}")}
    ) ORDER BY ts DESC, id DESC LIMIT 1 BY cust`
  // DISTINCT: a replayed event may sit in two unmerged rows.
  const points = `SELECT DISTINCT cust, src, g, ts, id, v, 1 AS counted FROM (${inRange.join(' UNION ALL ')})
    UNION ALL SELECT cust, src, g, ts, id, v, 0 AS counted FROM (${before})`
  const segments = `SELECT cust, src, g, v, counted,
      greatest(ts, {s:DateTime64(3, 'UTC')}) AS seg_start,
      leadInFrame(greatest(ts, {s:DateTime64(3, 'UTC')}), 1, {e:DateTime64(3, 'UTC')})
        OVER (PARTITION BY cust ORDER BY ts, id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS seg_end
    FROM (${points})`
  const groups = (q.groupBy ?? []).length > 0
  const dims = [...(q.windowSize ? ['window_start', 'length_ms'] : []), ...(q.bySource ? ['src'] : []), ...(groups ? ['g'] : [])]
  const select = [
    ...(q.windowSize ? ['window_start', 'length_ms'] : []),
    ...(q.bySource ? ['src AS source'] : []),
    ...(groups ? ['g AS group'] : []),
    'toString(sum(toDecimal256(v, 12) * toDecimal256(part_end - part_start, 0))) AS integral',
    'toString(sum(counted)) AS event_count',
  ]
  const tail = dims.length ? ` GROUP BY ${dims.join(', ')} ORDER BY ${dims.join(', ')}` : ''
  const ms = `SELECT cust, src, g, v, counted AS in_range, toUnixTimestamp64Milli(seg_start) AS ss, toUnixTimestamp64Milli(seg_end) AS se FROM (${segments})`
  if (!q.windowSize) {
    return { sql: `SELECT ${select.join(', ')} FROM (SELECT *, in_range AS counted, ss AS part_start, se AS part_end FROM (${ms}))${tail}`, params }
  }
  // Each segment is cut at the window boundaries (UTC, aligned to the epoch like
  // toStartOfInterval); an event counts in the window holding it, a zero-length segment too.
  params.step = WINDOW_MS[q.windowSize]
  params.sms = s
  params.ems = e
  const windows = `SELECT src, g, v,
      arrayJoin(range(intDiv(ss, {step:Int64}) * {step:Int64}, greatest(se, ss + 1), {step:Int64})) AS w,
      if(w = intDiv(ss, {step:Int64}) * {step:Int64}, in_range, 0) AS counted,
      greatest(ss, w) AS part_start, least(se, w + {step:Int64}) AS part_end,
      toString(toDateTime(intDiv(w, 1000), 'UTC')) AS window_start,
      toString(least({ems:Int64}, w + {step:Int64}) - greatest({sms:Int64}, w)) AS length_ms
    FROM (${ms})`
  return { sql: `SELECT ${select.join(', ')} FROM (${windows})${tail}`, params }
}

const WINDOW_MS: Record<WindowSize, number> = { MINUTE: 60_000, HOUR: 3_600_000, DAY: 86_400_000 }

/** The time-weighted average of an integral over `lengthMs`, half-up to the 12 decimals of stored values. */
export function weightedValue(integral: string, lengthMs: number): string {
  return new Decimal(integral).div(lengthMs).toDecimalPlaces(12, Decimal.ROUND_HALF_UP).toFixed()
}

/** The rows of the usage read (meter-usage.ts's UsageRow): value is the time-weighted average. */
export async function queryWeightedUsage(ch: ClickHouse, q: UsageQuery): Promise<UsageRow[]> {
  const { sql, params } = buildWeightedUsageSql(ch, q)
  const length = q.end.getTime() - q.start.getTime()
  const groupBy = q.groupBy ?? []
  return (await ch.query<WeightedRow>(sql, params)).map((r) => ({
    ...(q.windowSize ? { window_start: r.window_start } : {}),
    value: weightedValue(r.integral, r.length_ms ? Number(r.length_ms) : length),
    event_count: r.event_count,
    groups: groupBy.length ? { [groupBy[0]]: r.group ?? '' } : {},
    ...(q.bySource ? { source: r.source ?? '' } : {}),
  }))
}
