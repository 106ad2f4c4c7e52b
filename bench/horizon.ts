// The dedup horizon at scale (`npm run bench:horizon`): dedup keys seeded straight into
// dedup_events over 37 event days plus a full hot window's worth, then, at HORIZON_KEYS / 4 and
// at HORIZON_KEYS stored: a takeover of every shard (time, rows read), a 20,000-key lookup of
// old events (time, rows read per key), 100,000 copies of seeded events 1 to 35 days old (none
// may count) and 100,000 new events on those days (each counted once); after merges, the lookup
// at one part a day in this layout and in the one before migration 0008, alternated. Last, HORIZON_RATE
// events/s for HORIZON_SECONDS through one writer, RSS sampled every 10 s: the slope over the
// last window and the bound rate x window x bytes per key. Prints one table.
// Env: HORIZON_KEYS (200000000), HORIZON_RATE (10000), HORIZON_SECONDS (600),
// AGGREGATOR_HOT_WINDOW_MINUTES (the window; 30), HORIZON_GRANULARITIES (e.g. `64,128`: copies of
// dedup_events with those index granularities, and one with no rows, looked up alternately with
// the table itself after the merges). The local stack must run (Postgres: the fence).
import { rmSync } from 'node:fs'
import os from 'node:os'
import { join } from 'node:path'
import { ShardFence } from '../aggregator/shard-fence.js'
import { openStandaloneWriter, type Writer } from '../aggregator/writer.js'
import type { Piece } from '../aggregator/write-stage.js'
import { ClickHouse } from '../clickhouse/client.js'
import { migrateClickHouse } from '../clickhouse/migrate.js'
import { countedBy, LOOKUP_SETTINGS, lookupSql, storedKeyOf, type StoredKey } from '../clickhouse/queries/dedup-keys.js'
import { checkText, keyText } from '../schemas/shards.js'
import { loadConfig } from '../platform/config.js'
import type { UsageEvent } from '../schemas/events.js'
import type { MeterDefinition } from '../schemas/meters.js'

const env = process.env
const KEYS = Number(env.HORIZON_KEYS ?? 200_000_000)
const RATE = Number(env.HORIZON_RATE ?? 10_000)
const SECONDS = Number(env.HORIZON_SECONDS ?? 600)
const config = loadConfig(env)
const WINDOW_MS = config.aggregatorHotWindowMinutes * 60_000
const DAY = 86_400_000
const NOW = Date.now()
const HISTORY_FROM = NOW - 37 * DAY
const HISTORY_SPAN = 37 * DAY - WINDOW_MS
const TENANT = 'bench'
const ENV = 'env'
const STEP = 40_503 // spreads seed n over the span: ms = from + (n * STEP) mod span, the same in SQL and here

/** The keys written out as SQL tuples: the earlier lookup form, timed beside the current one. */
const keyTuples = (keys: StoredKey[]) => keys.map((k) => `(${k.shard},${k.ms},${keyText(k.d)},${checkText(k.d)})`).join(',')

const seedMs = (n: number) => HISTORY_FROM + ((n * STEP) % HISTORY_SPAN)

const chdbPath = join(config.dataDir, 'chdb-bench-horizon')
rmSync(chdbPath, { recursive: true, force: true })
const ch = ClickHouse.open({ ...config.clickhouse, chdbPath })
await migrateClickHouse(ch)
const pg = ShardFence.pool(config.databaseUrl, 8)
const meter: MeterDefinition = { id: `horizon-${NOW}`, tenant_id: TENANT, environment_id: ENV, event_name: 'call', filters: [], aggregation: { type: 'COUNT' } }
const meters = { version: async () => '1', load: async () => [meter] }
const rows: [string, string, string][] = []
const row = (what: string, figure: string, goal = '') => {
  rows.push([what, figure, goal])
  console.log(`  ${what}: ${figure}${goal ? ` (goal ${goal})` : ''}`)
}
const load = () => os.loadavg().map((l) => l.toFixed(1)).join(' ')
const millions = (n: number) => (n >= 1e6 ? `${(n / 1e6).toFixed(0)} M` : n.toLocaleString('en'))

/** Seeds keys `from`..`to` of id prefix `prefix`, their times by `msSql`, in statements of 10 M. */
async function seed(prefix: string, from: number, to: number, msSql: string): Promise<void> {
  for (let a = from; a < to; a += 10_000_000) {
    const n = Math.min(10_000_000, to - a)
    await ch.command(
      `INSERT INTO ${ch.table('dedup_events')}
       SELECT reinterpretAsUInt64(reverse(substring(idh, 1, 8))) % 64, ms, reinterpretAsUInt64(reverse(substring(h, 1, 8))), reinterpretAsUInt64(reverse(substring(h, 9, 8))), 0, 0
         FROM (SELECT toInt64(${msSql}) AS ms, MD5(concat('${TENANT}', '\\0', '${ENV}', '\\0', '${prefix}', toString(number))) AS idh,
                      MD5(concat('${TENANT}', '\\0', '${ENV}', '\\0', '${prefix}', toString(number), '\\0', toString(ms))) AS h
                 FROM numbers(${a}, ${n}))`,
      undefined, { max_partitions_per_insert_block: '1000' },
    )
  }
}

async function estimate(sql: string): Promise<number> {
  const r = await ch.query<{ rows: string }>(`EXPLAIN ESTIMATE ${sql}`, undefined, LOOKUP_SETTINGS)
  return r.reduce((n, x) => n + Number(x.rows), 0)
}

async function partsPerDay(): Promise<string> {
  const [r] = await ch.query<{ parts: string; days: string }>(
    `SELECT toString(count()) AS parts, toString(uniqExact(partition)) AS days FROM system.parts WHERE database = '${ch.database}' AND table = 'dedup_events' AND active`,
  )
  return (Number(r.parts) / Math.max(1, Number(r.days))).toFixed(1)
}

/** Waits (at most `seconds`) until no merge of dedup_events runs. */
async function settleMerges(seconds: number): Promise<void> {
  const until = Date.now() + seconds * 1000
  while (Date.now() < until) {
    const [r] = await ch.query<{ n: string }>(`SELECT toString(count()) AS n FROM system.merges WHERE database = '${ch.database}' AND table = 'dedup_events'`)
    if (Number(r.n) === 0) return
    await new Promise((res) => setTimeout(res, 2000))
  }
}

let offset = 0n
function piece(events: UsageEvent[], batch: string): Piece {
  const at = offset++
  return { stream: 'horizon', first: at, last: at, records: [{ offset: at, batch: { batch_id: batch, tenant_id: TENANT, environment_id: ENV, ingested_at: Date.now(), events } }] }
}
const event = (id: string, ms: number): UsageEvent => ({ event_id: id, event_name: 'call', external_customer_id: 'c1', customer_id: null, timestamp: ms, source: null, properties: '{}' })

async function takeover(label: string): Promise<Writer> {
  const t0 = performance.now()
  const w = await openStandaloneWriter({ ch, pg, meters, meterRefreshMs: 0, name: `horizon-${label}`, hotWindowMinutes: config.aggregatorHotWindowMinutes, log: () => {} })
  const s = (performance.now() - t0) / 1000
  const hotFrom = w.shards.hotFrom()
  let read = 0
  for (let shard = 0; shard < 64; shard++) read += await estimate(`SELECT key FROM ${ch.table('dedup_events')} WHERE shard = ${shard} AND ms >= ${Math.trunc(hotFrom)}`)
  const inMemory = [...w.shards.owned.values()].reduce((n, st) => n + st.keys.size, 0)
  // The window moves while the bench runs: rows read are compared per key of the window.
  row(`takeover at ${label} stored: every shard owned and writing`,
    `${s.toFixed(1)} s; ${inMemory.toLocaleString('en')} keys of the window in memory; rows read ${read.toLocaleString('en')} (${(read / Math.max(1, inMemory)).toFixed(3)} a key of the window)`,
    '< 30 s; rows read a key of the window within 20 % at both sizes')
  return w
}

async function coldLookup(label: string): Promise<void> {
  const keys = Array.from({ length: 20_000 }, (_, i) => {
    const n = Math.floor((i * 9_973_331) % Math.min(KEYS, 2 ** 31))
    return storedKeyOf(TENANT, ENV, `seed-${n}`, seedMs(n))
  })
  const tuples = keyTuples(keys)
  const oneIn = `SELECT toString(key) AS k FROM ${ch.table('dedup_events')} WHERE (shard, ms, key, check) IN (${tuples})`
  // Alternated: the lookup as written (the keys as one format() string) and the keys written out as tuples.
  const times: Record<string, number[]> = { 'format': [], 'tuples': [] }
  let found = 0
  for (let round = 0; round < 2; round++) {
    let t0 = performance.now()
    found = (await countedBy(ch, keys)).size
    times['format'].push(performance.now() - t0)
    t0 = performance.now()
    await ch.query(oneIn, undefined, LOOKUP_SETTINGS)
    times['tuples'].push(performance.now() - t0)
  }
  const read = await estimate(lookupSql(ch, keys))
  const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ')
  row(`20,000-key lookup of old events at ${label} stored`,
    `${fmt(times['format'])} ms (the keys written out as tuples: ${fmt(times['tuples'])} ms); ${found} found; rows read ${read.toLocaleString('en')} (${(read / 20_000).toFixed(0)} a key); load ${load()}`, '< 1 s')
}

/**
 * The lookup against copies of the store that differ in granule size, and against an empty copy
 * (what parsing the statement and building its sets cost alone), alternated round by round.
 */
async function lookupVariants(label: string, granularities: number[]): Promise<void> {
  const base = ch.table('dedup_events')
  const variants = [{ name: 'dedup_events', g: 256 }]
  // The layout before migration 0008: the primary index on all four columns, default compressed blocks.
  const earlier = 'dedup_events_earlier'
  await ch.command(`CREATE TABLE IF NOT EXISTS ${ch.table(earlier)} AS ${base} ENGINE = ReplacingMergeTree PARTITION BY intDiv(ms, 86400000) ORDER BY (shard, ms, key, check) SETTINGS index_granularity = 256`)
  await ch.command(`INSERT INTO ${ch.table(earlier)} SELECT * FROM ${base}`, undefined, { max_partitions_per_insert_block: '1000' })
  await ch.command(`OPTIMIZE TABLE ${ch.table(earlier)} FINAL`)
  variants.push({ name: earlier, g: -256 })
  for (const g of granularities) {
    const name = `dedup_events_g${g}`
    await ch.command(`CREATE TABLE IF NOT EXISTS ${ch.table(name)} AS ${base} ENGINE = ReplacingMergeTree PARTITION BY intDiv(ms, 86400000) PRIMARY KEY (shard, ms) ORDER BY (shard, ms, key, check) SETTINGS index_granularity = ${g}, min_compress_block_size = 4096, max_compress_block_size = 8192`)
    await ch.command(`INSERT INTO ${ch.table(name)} SELECT * FROM ${base}`, undefined, { max_partitions_per_insert_block: '1000' })
    await ch.command(`OPTIMIZE TABLE ${ch.table(name)} FINAL`)
    variants.push({ name, g })
  }
  await ch.command(`CREATE TABLE IF NOT EXISTS ${ch.table('dedup_events_empty')} AS ${base}`)
  variants.push({ name: 'dedup_events_empty', g: 0 })
  await ch.command(`OPTIMIZE TABLE ${base} FINAL`)
  const keys = Array.from({ length: 20_000 }, (_, i) => {
    const n = Math.floor((i * 9_973_331 + 17) % Math.min(KEYS, 2 ** 31))
    return storedKeyOf(TENANT, ENV, `seed-${n}`, seedMs(n))
  })
  const times = new Map<string, number[]>(variants.map((v) => [v.name, []]))
  for (let round = 0; round < 5; round++) {
    for (const v of variants) {
      const t0 = performance.now()
      await ch.query(lookupSql(ch, keys, v.name), undefined, LOOKUP_SETTINGS)
      times.get(v.name)!.push(performance.now() - t0)
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  for (const v of variants) {
    const read = v.g === 0 ? 0 : await estimate(lookupSql(ch, keys, v.name))
    const what = v.g === 0 ? 'empty table (statement and sets alone)' : v.g < 0 ? 'the layout before migration 0008, one part a day' : `granules of ${v.g} rows, one part a day`
    row(`20,000-key lookup at ${label}, ${what}`,
      `median ${median(times.get(v.name)!).toFixed(0)} ms of 5 (${times.get(v.name)!.map((x) => x.toFixed(0)).join(', ')})${v.g ? `; rows read ${read.toLocaleString('en')} (${(read / 20_000).toFixed(0)} a key)` : ''}; load ${load()}`, '< 1 s')
  }
}

async function exactness(w: Writer, label: string): Promise<void> {
  const copies: UsageEvent[] = []
  for (let i = 0; copies.length < 100_000; i++) {
    const n = Math.floor((i * 7_919_111) % Math.min(KEYS, 2 ** 31))
    const ms = seedMs(n)
    if (ms > NOW - 35 * DAY && ms < NOW - DAY) copies.push(event(`seed-${n}`, ms))
  }
  const fresh = copies.map((e, i) => event(`new-${label}-${i}`, e.timestamp))
  let copiesCounted = 0
  let newCounted = 0
  for (let i = 0; i < copies.length; i += 20_000) {
    const [a, b] = await Promise.all([w.stage.add(piece(copies.slice(i, i + 20_000), `copies-${i}`)), w.stage.add(piece(fresh.slice(i, i + 20_000), `new-${i}`))])
    copiesCounted += a.events - a.duplicates
    newCounted += b.events - b.duplicates
  }
  const again = await w.stage.add(piece(fresh.slice(0, 20_000), 'new-again'))
  row(`100,000 copies of seeded events 1-35 days old + 100,000 new events on those days, at ${label} stored`,
    `copies counted ${copiesCounted}; new counted ${newCounted}; 20,000 of the new re-sent: ${again.events - again.duplicates} counted`, 'copies 0, new 100,000, re-sent 0')
}

/** The memory the engine tracks itself (its caches, parts in memory, merges). */
async function engineMemory(): Promise<number> {
  const [r] = await ch.query<{ v: string }>(`SELECT toString(value) AS v FROM system.metrics WHERE metric = 'MemoryTracking'`)
  return Number(r?.v ?? 0)
}

async function steady(w: Writer): Promise<void> {
  // RATE events/s timestamped now, one write a second, RSS every 10 s.
  const samples: { s: number; rss: number; keys: number; heap: number; external: number; engine: number }[] = []
  const start = performance.now()
  const baseline = process.memoryUsage().rss
  let next = 0
  while ((performance.now() - start) / 1000 < SECONDS) {
    const sec = performance.now()
    await w.stage.add(piece(Array.from({ length: RATE }, () => event(`live-${next++}`, Date.now())), `live-${next}`))
    const elapsed = (performance.now() - start) / 1000
    if (samples.length === 0 || elapsed - samples[samples.length - 1].s >= 10) {
      const m = process.memoryUsage()
      samples.push({ s: elapsed, rss: m.rss, heap: m.heapUsed, external: m.external, engine: await engineMemory(), keys: [...w.shards.owned.values()].reduce((n, st) => n + st.keys.size, 0) })
    }
    const left = 1000 - (performance.now() - sec)
    if (left > 0) await new Promise((r) => setTimeout(r, left))
  }
  // Least-squares slope of RSS over the samples of the last window (two samples alone swing with GC and merges).
  const last = samples.filter((x) => x.s >= SECONDS - WINDOW_MS / 1000)
  const mean = (f: (x: (typeof last)[number]) => number) => last.reduce((n, x) => n + f(x), 0) / last.length
  const ms = mean((x) => x.s)
  const mr = mean((x) => x.rss)
  const cov = last.reduce((n, x) => n + (x.s - ms) * (x.rss - mr), 0)
  const vs = last.reduce((n, x) => n + (x.s - ms) ** 2, 0)
  const slope = last.length > 1 && vs > 0 ? (cov / vs) * 60 : 0
  const mib = (n: number) => (n / 2 ** 20).toFixed(0)
  console.log(`  samples (s, RSS MiB, JS heap MiB, external MiB, engine's tracked MiB, keys): ${samples.map((x) => `${x.s.toFixed(0)} ${mib(x.rss)} ${mib(x.heap)} ${mib(x.external)} ${mib(x.engine)} ${x.keys}`).join('; ')}`)
  const peak = Math.max(...samples.map((x) => x.rss))
  const bound = baseline + (WINDOW_MS / 1000) * RATE * 57
  const achieved = next / ((performance.now() - start) / 1000)
  row(`${RATE}/s offered for ${SECONDS} s (${Math.round(achieved)}/s written)`,
    `RSS ${(baseline / 2 ** 20).toFixed(0)} -> peak ${(peak / 2 ** 20).toFixed(0)} MiB; slope over the last window (least squares, ${last.length} samples) ${(slope / 2 ** 20).toFixed(2)} MiB/min; keys in memory at the end ${samples[samples.length - 1].keys.toLocaleString('en')}`,
    `slope ~0; peak < baseline + window x rate x 57 B = ${(bound / 2 ** 20).toFixed(0)} MiB`)
}

console.log(`bench:horizon: ${KEYS.toLocaleString('en')} keys over 37 days, window ${config.aggregatorHotWindowMinutes} min, ${RATE}/s for ${SECONDS} s; load ${load()}`)
const hot = Math.round(RATE * (WINDOW_MS / 1000))
let t = performance.now()
await seed('hot-', 0, hot, `${NOW - WINDOW_MS} + ((number * ${STEP}) % ${WINDOW_MS})`)
await seed('seed-', 0, Math.floor(KEYS / 4), `${HISTORY_FROM} + ((number * ${STEP}) % ${HISTORY_SPAN})`)
row(`seeded ${(KEYS / 4).toLocaleString('en')} keys + ${hot.toLocaleString('en')} in the window`, `${((performance.now() - t) / 1000).toFixed(0)} s`)
await takeover(millions(KEYS / 4))
await coldLookup(millions(KEYS / 4))
t = performance.now()
await seed('seed-', Math.floor(KEYS / 4), KEYS, `${HISTORY_FROM} + ((number * ${STEP}) % ${HISTORY_SPAN})`)
row(`seeded up to ${KEYS.toLocaleString('en')}`, `${((performance.now() - t) / 1000).toFixed(0)} s; load ${load()}`)
const w = await takeover(millions(KEYS))
await coldLookup(`${millions(KEYS)} (parts as seeded: ${await partsPerDay()} a day)`)
// Stored over weeks, a day's keys sit in a few merged parts; seeded at once, they arrive as many.
await settleMerges(Number(env.HORIZON_MERGE_WAIT_S ?? 300))
await coldLookup(`${millions(KEYS)} (after merges: ${await partsPerDay()} parts a day)`)
// A day whose parts are all an hour old is merged into one (min_age_to_force_merge_seconds,
// migration 0008); lowered to a minute here so the bench need not wait an hour.
await ch.command(`ALTER TABLE ${ch.table('dedup_events')} MODIFY SETTING min_age_to_force_merge_seconds = 60`)
await new Promise((r) => setTimeout(r, 70_000))
await settleMerges(Number(env.HORIZON_MERGE_WAIT_S ?? 300))
await coldLookup(`${millions(KEYS)} (a day at rest merged into one part: ${await partsPerDay()} parts a day)`)
// One part a day in this layout and in the earlier one, alternated (and any granule-size copies).
await lookupVariants(millions(KEYS), (env.HORIZON_GRANULARITIES ?? '').split(',').filter(Boolean).map(Number))
await exactness(w, millions(KEYS))
if (SECONDS > 0) await steady(w)

console.log(`\n| figure | measured | goal |\n|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}`)
console.log(`load ${load()}, ${os.cpus().length} cores`)
await ch.close()
await pg.end()
process.exit(0)
