// WEIGHTED_SUM read cost: loads gauge readings for three customers through the aggregator's
// write stage into a scratch embedded ClickHouse, then times the reads billing makes for
// November (the month's time-weighted average, per DAY window, per source) next to the plain
// SUM read of the same events, and prints a table (p50 / p90 over --samples reads).
//   node --import tsx bench/weighted-usage.ts [--samples 20]
// Customers: `minutely` (a reading every minute in October and November), `hourly` and `daily`
// (readings for the 13 months before December: the value carried into November is found by
// scanning their earlier buckets).
import { parseArgs } from 'node:util'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { ClickHouse } from '../clickhouse/client.js'
import { migrateClickHouse } from '../clickhouse/migrate.js'
import { queryMeterUsage, type UsageQuery } from '../clickhouse/queries/meter-usage.js'
import { queryWeightedUsage } from '../clickhouse/queries/weighted-usage.js'
import { openStandaloneWriter } from '../aggregator/writer.js'
import { ShardFence } from '../aggregator/shard-fence.js'
import type { MeterDefinition } from '../schemas/meters.js'
import type { UsageEvent } from '../schemas/events.js'
import { loadConfig, loadConfigOrExit } from '../platform/config.js'

const { values: args } = parseArgs({ options: { samples: { type: 'string' } } })
const SAMPLES = Number(args.samples ?? 20)
const config = loadConfigOrExit()
const path = join(config.dataDir, 'bench-weighted-chdb')
rmSync(path, { recursive: true, force: true })
const ch = ClickHouse.open({ ...config.clickhouse, chdbPath: path, url: undefined })
await migrateClickHouse(ch)

const tenant = 'bench'
const meters: MeterDefinition[] = [
  { id: 'gb-weighted', tenant_id: tenant, environment_id: 'prod', event_name: 'storage', filters: [], aggregation: { type: 'WEIGHTED_SUM', field: 'gb' } },
  { id: 'gb-sum', tenant_id: tenant, environment_id: 'prod', event_name: 'storage', filters: [], aggregation: { type: 'SUM', field: 'gb' } },
]
const stage = (await openStandaloneWriter({ ch: ch, pg: ShardFence.pool(loadConfig(process.env).databaseUrl), meters: { version: async () => 'v', load: async () => meters }, log: console.error })).stage

const NOV = Date.parse('2026-11-01T00:00:00Z')
const DEC = Date.parse('2026-12-01T00:00:00Z')
const series: [string, number, number][] = [
  ['minutely', Date.parse('2026-10-01T00:00:00Z'), 60_000],
  ['hourly', Date.parse('2025-11-01T00:00:00Z'), 3_600_000],
  ['daily', Date.parse('2025-11-01T00:00:00Z'), 86_400_000],
]
let offset = 0n
const counts = new Map<string, number>()
const t0 = performance.now()
for (const [customer, from, step] of series) {
  let events: UsageEvent[] = []
  let n = 0
  const flush = async () => {
    await stage.add({ stream: 'bench/0', first: offset, last: offset, records: [{ offset, batch: { batch_id: `b${offset}`, tenant_id: tenant, environment_id: 'prod', ingested_at: Date.now(), events } }] })
    offset++
    events = []
  }
  for (let ts = from; ts < DEC; ts += step) {
    // A write's dedup keys go to one partition a day: at most 60 days a piece (ingest's event-age
    // window keeps a real write within 37).
    if (events.length && ts - events[0].timestamp >= 60 * 86_400_000) await flush()
    events.push({ event_id: `${customer}-${ts}`, event_name: 'storage', external_customer_id: customer, customer_id: null, timestamp: ts, source: 'agent', properties: `{"gb":"${(n % 997) + 0.5}"}` })
    n++
    if (events.length === 5_000) await flush()
  }
  if (events.length) await flush()
  counts.set(customer, n)
}
console.log(`loaded ${[...counts.values()].reduce((a, b) => a + b, 0)} events in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]
async function time(read: () => Promise<unknown>): Promise<string> {
  await read()
  const ms: number[] = []
  for (let i = 0; i < SAMPLES; i++) {
    const t = performance.now()
    await read()
    ms.push(performance.now() - t)
  }
  return `${pct(ms, 50).toFixed(1)} / ${pct(ms, 90).toFixed(1)}`
}

const rows: string[][] = []
for (const [customer] of series) {
  const q = (meterId: string, aggregation: UsageQuery['aggregation']): UsageQuery => ({
    tenantId: tenant, environmentId: 'prod', meterId, aggregation, externalCustomerId: customer, start: new Date(NOV), end: new Date(DEC),
  })
  const inNov = (await queryWeightedUsage(ch, q('gb-weighted', 'WEIGHTED_SUM')))[0]
  rows.push([
    customer, String(counts.get(customer)), inNov.event_count,
    await time(() => queryMeterUsage(ch, q('gb-sum', 'SUM'))),
    await time(() => queryWeightedUsage(ch, q('gb-weighted', 'WEIGHTED_SUM'))),
    await time(() => queryWeightedUsage(ch, { ...q('gb-weighted', 'WEIGHTED_SUM'), windowSize: 'DAY' })),
    await time(() => queryWeightedUsage(ch, { ...q('gb-weighted', 'WEIGHTED_SUM'), bySource: true })),
  ])
}
const head = ['customer', 'events stored', 'in November', 'SUM month ms', 'WEIGHTED month ms', 'WEIGHTED by DAY ms', 'WEIGHTED by source ms']
const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(width[i])).join(' | ')} |`
console.log(`\nNovember reads, p50 / p90 over ${SAMPLES} reads (embedded ClickHouse, one process)\n`)
console.log(line(head))
console.log(`|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`)
for (const r of rows) console.log(line(r))
await ch.close()
rmSync(path, { recursive: true, force: true })
