// bench:usage: loads N events (default 100,000,000) for 10,000 customers over one month through
// the aggregator's own write stage (dedup, meter rows, buckets, keys) into the embedded
// ClickHouse, then times the usage reads billing depends on, and audits a sample of them.
//   npm run bench:usage -- --events 5000000
// --sql-events M adds M more events generated inside ClickHouse into the same four tables, in
// the very rows the write stage produces (same distributions), for read figures at a scale the
// write path would take hours to load on a small machine. The table says how each part was loaded.
// Generated events get no dedup_events entry (no read uses it): its size per event is measured on
// the write-stage part. --keep adds to the data of the previous run (--sql-from: first generated
// event number, so ids stay unique) instead of starting empty.
import { parseArgs } from 'node:util'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Decimal } from 'decimal.js'
import { ClickHouse } from '../clickhouse/client.js'
import { migrateClickHouse } from '../clickhouse/migrate.js'
import { queryMeterUsage, type UsageQuery } from '../clickhouse/queries/meter-usage.js'
import { openStandaloneWriter } from '../aggregator/writer.js'
import { ShardFence } from '../aggregator/shard-fence.js'
import type { MeterDefinition } from '../schemas/meters.js'
import { loadConfig, loadConfigOrExit } from '../platform/config.js'
import type { UsageEvent } from '../schemas/events.js'

const { values: args } = parseArgs({ options: { events: { type: 'string' }, customers: { type: 'string' }, samples: { type: 'string' }, 'write-events': { type: 'string' }, 'sql-events': { type: 'string' }, 'sql-from': { type: 'string' }, keep: { type: 'boolean' } } })
const N = Number(args.events ?? 100_000_000)
const CUSTOMERS = Number(args.customers ?? 10_000)
const SAMPLES = Number(args.samples ?? 200)
/** events per piece (a consumer batch); the stage coalesces up to 20k events per write */
const BATCH = Number(args['write-events'] ?? 5_000)
const MONTH = Date.parse('2026-10-01T00:00:00Z')
const MONTH_MS = 31 * 86_400_000

const config = loadConfigOrExit()
const path = join(config.dataDir, 'bench-usage-chdb')
if (!args.keep) rmSync(path, { recursive: true, force: true })
const ch = ClickHouse.open({ ...config.clickhouse, chdbPath: path, url: undefined })
await migrateClickHouse(ch)

const tenant = 'bench'
const meters: MeterDefinition[] = [
  { id: 'tokens', tenant_id: tenant, environment_id: 'prod', event_name: 'llm', filters: [], aggregation: { type: 'SUM', field: 'tokens', group_by: 'model' } },
  { id: 'users', tenant_id: tenant, environment_id: 'prod', event_name: 'llm', filters: [], aggregation: { type: 'COUNT_UNIQUE', field: 'user' } },
]
const stage = (await openStandaloneWriter({ ch: ch, pg: ShardFence.pool(loadConfig(process.env).databaseUrl), meters: { version: async () => 'v', load: async () => meters }, log: console.error })).stage

// Deterministic pseudo-random events (xorshift), so two runs load the same data.
let seed = 2463534242
const rand = () => ((seed ^= seed << 13), (seed ^= seed >>> 17), (seed ^= seed << 5), (seed >>> 0) / 4294967296)
const MODELS = ['small', 'medium', 'large']
const bar = (done: number) => {
  const w = 40
  const f = Math.round((done / N) * w)
  process.stderr.write(`\r[${'#'.repeat(f)}${'.'.repeat(w - f)}] ${(done / 1e6).toFixed(1)}M / ${(N / 1e6).toFixed(1)}M events`)
}

const IN_FLIGHT = 4
const inFlight: Promise<unknown>[] = []
const t0 = performance.now()
let offset = 0n
for (let done = 0; done < N; ) {
  const n = Math.min(BATCH, N - done)
  const events: UsageEvent[] = new Array(n)
  for (let i = 0; i < n; i++) {
    const id = done + i
    events[i] = {
      event_id: `e${id}`, event_name: 'llm', external_customer_id: `c${Math.floor(rand() * CUSTOMERS)}`, customer_id: null,
      timestamp: MONTH + Math.floor(rand() * MONTH_MS), source: 'api',
      properties: `{"tokens":${1 + Math.floor(rand() * 1000)},"user":"u${Math.floor(rand() * 50)}","model":"${MODELS[id % 3]}"}`,
    }
  }
  // Like the consumer's partitions: several pieces in flight, each stream with consecutive offsets.
  const partition = Number(offset) % IN_FLIGHT
  const at = BigInt(Math.floor(Number(offset) / IN_FLIGHT))
  inFlight.push(stage.add({ stream: `bench/${partition}`, first: at, last: at, records: [{ offset: at, batch: { batch_id: `b${offset}`, tenant_id: tenant, environment_id: 'prod', ingested_at: Date.now(), events } }] }))
  if (inFlight.length >= IN_FLIGHT) await inFlight.shift()
  offset++
  done += n
  if (Number(offset) % 10 === 0 || done === N) bar(done)
}
await Promise.all(inFlight)
const loadSeconds = (performance.now() - t0) / 1000
process.stderr.write('\n')

const SQL_EVENTS = Number(args['sql-events'] ?? 0)
const sqlT0 = performance.now()
const SQL_FROM = Number(args['sql-from'] ?? 0)
for (let lo = SQL_FROM; lo < SQL_FROM + SQL_EVENTS; lo += 10_000_000) {
  const n = Math.min(10_000_000, SQL_FROM + SQL_EVENTS - lo)
  const gen = `(SELECT concat('s', toString(number)) AS eid, concat('c', toString(cityHash64(number, 1) % ${CUSTOMERS})) AS cust,
      fromUnixTimestamp64Milli(toInt64(${MONTH} + cityHash64(number, 2) % ${MONTH_MS}), 'UTC') AS ts, 1 + cityHash64(number, 3) % 1000 AS tok,
      concat('u', toString(cityHash64(number, 4) % 50)) AS usr, ['small', 'medium', 'large'][number % 3 + 1] AS model
      FROM numbers(${lo}, ${n}))`
  const nothing = "(toDateTime64(0, 3, 'UTC'), '', toDecimal128(0, 12))"
  await ch.command(`INSERT INTO ${ch.table('events_raw')} SELECT 'bench', 'prod', eid, 'llm', cust, '', ts, 'api',
      concat('{"tokens":', toString(tok), ',"user":"', usr, '","model":"', model, '"}'), now64(3), 1 FROM ${gen}`)
  await ch.command(`INSERT INTO ${ch.table('meter_events')} SELECT 'bench', 'prod', m, cust, ts, eid, if(m = 'tokens', toDecimal128(tok, 12), toDecimal128(1, 12)),
      if(m = 'users', usr, ''), 'api', if(m = 'tokens', [model], []), now64(3) FROM ${gen} ARRAY JOIN ['tokens', 'users'] AS m`)
  await ch.command(`INSERT INTO ${ch.table('meter_buckets')} SELECT 'bench', 'prod', m, cust, toStartOfMinute(ts), if(m = 'tokens', [model], []), 'api',
      if(m = 'tokens', toDecimal128(tok, 12), toDecimal128(1, 12)), 1, if(m = 'tokens', toDecimal128(tok, 12), toDecimal128(1, 12)), ${nothing},
      if(m = 'users', [usr], []), '', [], '' FROM ${gen} ARRAY JOIN ['tokens', 'users'] AS m`)
  process.stderr.write(`\r[sql] ${((lo + n - SQL_FROM) / 1e6).toFixed(0)}M / ${(SQL_EVENTS / 1e6).toFixed(0)}M events generated in ClickHouse`)
}
const sqlSeconds = (performance.now() - sqlT0) / 1000
if (SQL_EVENTS) process.stderr.write('\n')
const [{ stored }] = await ch.query<{ stored: string }>(
  `SELECT toString((SELECT count() FROM ${ch.table('events_raw')})) AS stored`,
)
const TOTAL = Number(stored)
// Merged once after loading; a re-read of kept data (--keep, nothing loaded) reads it as it is.
if (N + SQL_EVENTS > 0) {
  await ch.command(`OPTIMIZE TABLE ${ch.table('meter_buckets')} FINAL`).catch((err) => console.error('OPTIMIZE failed; the reads run on unmerged parts', err))
}

async function timed(q: () => Promise<unknown>): Promise<number> {
  const t = performance.now()
  await q()
  return performance.now() - t
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]
const monthQuery = (meter: MeterDefinition, customer: string): UsageQuery => ({
  tenantId: tenant, environmentId: 'prod', meterId: meter.id, aggregation: meter.aggregation.type as UsageQuery['aggregation'],
  declaredGroupBy: meter.aggregation.group_by, externalCustomerId: customer,
  // A subscription period starting at an arbitrary second: both edge minutes are partial.
  start: new Date(MONTH + 37_123), end: new Date(MONTH + MONTH_MS - 22_877),
})

const rows: [string, string][] = []
const sample = Array.from({ length: SAMPLES }, () => ({ meter: meters[Math.floor(rand() * meters.length)], customer: `c${Math.floor(rand() * CUSTOMERS)}` }))
const plain: number[] = []
const grouped: number[] = []
const perEvent: number[] = []
for (const s of sample) {
  plain.push(await timed(() => queryMeterUsage(ch, monthQuery(s.meter, s.customer))))
  grouped.push(await timed(() => queryMeterUsage(ch, { ...monthQuery(meters[0], s.customer), groupBy: ['model'], windowSize: 'DAY' })))
  // The same read over per-event rows only (the layout before buckets, but sorted by customer).
  perEvent.push(await timed(() => queryMeterUsage(ch, { ...monthQuery(s.meter, s.customer), groupBy: ['user'] })))
}
const allCustomers: number[] = []
for (let i = 0; i < 5; i++) {
  allCustomers.push(await timed(() => ch.query(
    `SELECT external_customer_id, toString(sum(value_sum)) AS v FROM ${ch.table('meter_buckets')}
      WHERE tenant_id = 'bench' AND environment_id = 'prod' AND meter_id = 'tokens' AND bucket_start >= '2026-10-01 00:00:00' AND bucket_start < '2026-11-01 00:00:00'
      GROUP BY external_customer_id`,
  )))
}
const disk = await ch.query<{ table: string; bytes: string; rows: string }>(
  `SELECT table, toString(sum(bytes_on_disk)) AS bytes, toString(sum(rows)) AS rows FROM system.parts WHERE database = {db:String} AND active GROUP BY table ORDER BY table`,
  { db: ch.database },
)

// Audit a sample: bucket path equals the per-event path (meter_events) for the same range.
let audited = 0
for (const s of sample.slice(0, 20)) {
  const q = monthQuery(s.meter, s.customer)
  const [b] = await queryMeterUsage(ch, q)
  const viaEvents = await queryMeterUsage(ch, { ...q, groupBy: ['user'] })
  const total = s.meter.aggregation.type === 'SUM' ? viaEvents.reduce((a, r) => a.plus(r.value), new Decimal(0)) : null
  if (total && !total.eq(b.value)) throw new Error(`audit failed for ${s.customer}: buckets ${b.value}, events ${total}`)
  audited++
}

rows.push(['events loaded through the write stage', N.toLocaleString('en-US')])
if (SQL_EVENTS) rows.push(['events generated in ClickHouse (same rows)', `${SQL_EVENTS.toLocaleString('en-US')} (${sqlSeconds.toFixed(0)} s)`])
rows.push(['events stored', TOTAL.toLocaleString('en-US')])
if (N) rows.push(['load rate through the write stage', `${Math.round(N / loadSeconds).toLocaleString('en-US')} events/s (${loadSeconds.toFixed(1)} s)`])
rows.push([`one customer, month, p50 / p99 (${SAMPLES} samples)`, `${pct(plain, 50).toFixed(1)} / ${pct(plain, 99).toFixed(1)} ms`])
rows.push(['same, group_by model + DAY windows, p50 / p99', `${pct(grouped, 50).toFixed(1)} / ${pct(grouped, 99).toFixed(1)} ms`])
rows.push(['same over per-event rows (undeclared group_by), p50 / p99', `${pct(perEvent, 50).toFixed(1)} / ${pct(perEvent, 99).toFixed(1)} ms`])
rows.push(['ratio per-event / buckets (p50)', `${(pct(perEvent, 50) / pct(plain, 50)).toFixed(1)}x`])
rows.push(['all customers, one meter, month (invoice run read), median of 5', `${pct(allCustomers, 50).toFixed(1)} ms`])
for (const d of disk) rows.push([`disk: ${d.table}`, `${(Number(d.bytes) / TOTAL).toFixed(1)} bytes/event (${Number(d.rows).toLocaleString('en-US')} rows)`])
rows.push(['audit: bucket path = per-event path', `${audited} of ${audited} sampled reads equal`])
const w = Math.max(...rows.map((r) => r[0].length))
console.log(`| ${'measure'.padEnd(w)} | result |\n|${'-'.repeat(w + 2)}|--------|`)
for (const [k, v] of rows) console.log(`| ${k.padEnd(w)} | ${v} |`)
await ch.close()
