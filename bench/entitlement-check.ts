// bench:entitlement-check: the live entitlement check under ingest load, on one of two topologies
// (--topology):
// - all-in-one (default): everything in this process (ingest, aggregator, billing-api; chDB binds
//   its data directory to one process), started with startPlatform (scripts/composition-root.ts);
// - processes: the production topology as a child (scripts/platform-processes.ts through
//   bench/support/platform-child.ts, as bench:steady starts it): billing-api on --port, ingest on
//   port + 1, aggregator i on port + 10 + i, the ClickHouse endpoint on port + 50, its own data
//   directory, topic, consumer group and Redis prefix against the running stack. The bench then
//   reaches it only over HTTP and SQL: the demo tenant's key, events to ingest's URL, the seed's
//   progress from each aggregator process's GET /aggregator/consumers, the counter reads and
//   event-loop delay from billing-api's /metrics, the cold customers' rows copied through a pg
//   pool on DATABASE_URL.
// C customers (default 1,000) on one plan granting F metered features (default 20, one SUM
// meter each, a monthly hard limit nobody reaches), with E usage events per customer over the
// last days sent through ingest. Then, for D seconds, from a worker
// process (so the load generator does not share the platform's event loop):
// - events stream to ingest's POST /v1/events/raw/bulk at R events/s (default 10,000), random
//   customer and meter, timestamped now;
// - 32 keep-alive connections run POST /v1/entitlements/check on random (customer, feature);
// - a probe sends one event at a time for a customer of its own and polls the check until it
//   shows: staleness = ack of the event -> first check that includes it.
// Printed: the topology, checks/s, p50/p99/max, staleness p50/p99, event-loop delay p99 of the
// platform's thread (processes: billing-api's, prom-client's nodejs_eventloop_lag_p99_seconds
// over the run), RSS, each process's CPU seconds and peak RSS during the run. Then the
// cold-cache run: K more customers (default 100,000) copied in SQL from a template, and one
// check for each, 32 in flight (every check misses the caches).
// Asserts nothing about time.
//   npm run bench:entitlement-check -- --customers 1000 --features 20 --rate 10000 --seconds 30 --cold 100000
//     [--topology all-in-one|processes] [--thread worker|main (all-in-one)] [--port 18080 (processes; BENCH_PORT)]
import { parseArgs } from 'node:util'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { cpuByProcess, parseTopology, perProcessFigures, perProcessText, rssOfPid, rssPeaks, startPlatformChild, type PlatformProcess } from './support/platform-child.js'

const { values: args } = parseArgs({
  options: {
    customers: { type: 'string' }, features: { type: 'string' }, events: { type: 'string' }, rate: { type: 'string' },
    seconds: { type: 'string' }, cold: { type: 'string' }, connections: { type: 'string' }, load: { type: 'string' },
    /** where the platform's aggregator runs: its worker thread (AGGREGATOR_THREAD's default) or the API's main thread */
    thread: { type: 'string' },
    /** all-in-one (this process) or processes (every role its own process, a child of this one) */
    topology: { type: 'string' },
    /** processes: billing-api's port (ingest +1, aggregator i +10+i, the ClickHouse endpoint +50) */
    port: { type: 'string', default: process.env.BENCH_PORT ?? '18080' },
  },
})
const CUSTOMERS = Number(args.customers ?? 1000)
const FEATURES = Number(args.features ?? 20)
const EVENTS = Number(args.events ?? 20)
const RATE = Number(args.rate ?? 10_000)
const SECONDS = Number(args.seconds ?? 30)
const COLD = Number(args.cold ?? 100_000)
const CONNECTIONS = Number(args.connections ?? 32)
const TOPOLOGY = parseTopology(args.topology)

interface Load {
  /** billing-api's base URL, and ingest's (the events) */
  url: string
  ingestUrl: string
  key: string
  customers: number
  features: number
  rate: number
  seconds: number
  connections: number
  /** cold run: check these customers once each instead */
  cold?: { prefix: string; count: number }
}
interface LoadResult {
  checks: number[]
  staleness: number[]
  accepted: number
  refused: number
  seconds: number
  /** checks answered with an error status or not at all */
  failed: number
  errors: string[]
}

const pct = (xs: number[], p: number) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] : NaN)
const ms = (x: number) => x.toFixed(1)

if (args.load) {
  // The load generator (a child process).
  const load = JSON.parse(args.load) as Load
  const post = async (path: string, body: unknown) => {
    const res = await fetch((path.startsWith('/v1/events') ? load.ingestUrl : load.url) + path, { method: 'POST', headers: { 'x-api-key': load.key, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const json = (await res.json()) as Record<string, unknown>
    return { status: res.status, json }
  }
  const result: LoadResult = { checks: [], staleness: [], accepted: 0, refused: 0, seconds: 0, failed: 0, errors: [] }
  const error = (e: unknown) => {
    if (result.errors.length < 5) result.errors.push(String(e))
  }
  const failed = (e: unknown) => {
    result.failed++
    error(e)
  }
  let rnd = 12345
  const next = () => ((rnd = (rnd * 1103515245 + 12345) % 2147483648), rnd)
  const t0 = performance.now()
  if (load.cold) {
    let i = 0
    await Promise.all(Array.from({ length: load.connections }, async () => {
      while (i < load.cold!.count) {
        const n = i++
        const t = performance.now()
        const r = await post('/v1/entitlements/check', { external_customer_id: `${load.cold!.prefix}${n}`, feature_lookup_key: `f${n % load.features}` }).catch((e) => (failed(e), null))
        if (r?.status === 200) result.checks.push(performance.now() - t)
        else if (r) failed(JSON.stringify(r.json))
      }
    }))
  } else {
    const end = t0 + load.seconds * 1000
    let seq = 0
    // Events: bulk requests of 500 every 500/rate seconds.
    const stream = (async () => {
      if (load.rate <= 0) return // --rate 0: checks alone
      const every = (500 / load.rate) * 1000
      let due = performance.now()
      const inFlight = new Set<Promise<void>>()
      while (performance.now() < end) {
        const events = Array.from({ length: 500 }, () => {
          const c = next() % load.customers
          return { event_id: `s${seq++}`, event_name: `e${next() % load.features}`, external_customer_id: `cust-${c}`, properties: { n: 1 } }
        })
        const p = post('/v1/events/raw/bulk', { events }).then((r) => {
          if (r.status === 202) result.accepted += 500
          else result.refused += 500
        }, error)
        inFlight.add(p)
        void p.finally(() => inFlight.delete(p))
        if (inFlight.size >= 16) await Promise.race(inFlight)
        due += every
        const wait = due - performance.now()
        if (wait > 0) await new Promise((r) => setTimeout(r, wait))
      }
      await Promise.all(inFlight)
    })()
    const checks = Promise.all(Array.from({ length: load.connections }, async () => {
      while (performance.now() < end) {
        const t = performance.now()
        const r = await post('/v1/entitlements/check', { external_customer_id: `cust-${next() % load.customers}`, feature_lookup_key: `f${next() % load.features}` }).catch((e) => (failed(e), null))
        if (r?.status === 200) result.checks.push(performance.now() - t)
        else if (r) failed(JSON.stringify(r.json))
      }
    }))
    const probe = (async () => {
      const check = async () => Number((await post('/v1/entitlements/check', { external_customer_id: 'probe', feature_lookup_key: 'f0' })).json.usage)
      let expected = await check()
      while (performance.now() < end - 5000) {
        const r = await post('/v1/events/raw/bulk', { events: [{ event_id: `p${seq++}`, event_name: 'e0', external_customer_id: 'probe', properties: { n: 1 } }] })
        const acked = performance.now()
        if (r.status !== 202) continue
        expected++
        for (;;) {
          if ((await check()) >= expected) break
          await new Promise((res) => setTimeout(res, 5))
        }
        result.staleness.push(performance.now() - acked)
        await new Promise((res) => setTimeout(res, 100))
      }
    })()
    await Promise.all([stream, checks, probe.catch(error)])
  }
  result.seconds = (performance.now() - t0) / 1000
  process.send!(result, () => process.exit(0))
} else {
  // The platform's side, below: function declarations only (this runs before a const there would be set).
  await main()
  // Something the platform leaves behind keeps the loop alive; exiting also writes --cpu-prof.
  process.exit(0)
}

// The live counters' bucket reads (meterline_live_counter_read_seconds) by kind: count, sum, buckets.
type Reads = Map<string, { count: number; sum: number; buckets: [number, number][] }>
interface Sample { metricName?: string; labels: Partial<Record<string, string | number>>; value: number }

/** What the bench needs of the platform, in this process or over HTTP and SQL. */
interface Platform {
  url: string
  ingestUrl: string
  /** the topology row */
  topology: string
  /** where ingest and the aggregator run (the set-up row) */
  placement: string
  scopeLoad: boolean
  /** an API key of a tenant of its own */
  tenantKey(name: string): Promise<string>
  /** a statement on the platform's Postgres */
  sql(q: string): Promise<Record<string, unknown>[]>
  /** events the aggregator has written (every consumer, every process) */
  written(): Promise<number>
  reads(): Promise<Reads>
  /** event-loop delay of the API's thread: start measuring, then the p99 in ms since the start */
  loop: { what: string; start(): Promise<void>; p99(): Promise<number> }
  processes(): PlatformProcess[]
  /** the platform's RSS now, bytes (what: ' (of which processes)', or nothing: this one) */
  rss: { what: string; now: () => number }
  stop(): Promise<void>
}

function readsOf(samples: Sample[]): Reads {
  const out: Reads = new Map()
  for (const v of samples) {
    const kind = String(v.labels.kind)
    if (!out.has(kind)) out.set(kind, { count: 0, sum: 0, buckets: [] })
    const r = out.get(kind)!
    if (v.metricName?.endsWith('_count')) r.count = v.value
    else if (v.metricName?.endsWith('_sum')) r.sum = v.value
    else if (v.metricName?.endsWith('_bucket') && v.labels.le !== '+Inf') r.buckets.push([Number(v.labels.le), v.value])
  }
  return out
}

function readsText(a: Reads, b: Reads): string {
  return [...b].map(([kind, r]) => {
    const o = a.get(kind) ?? { count: 0, sum: 0, buckets: [] }
    const n = r.count - o.count
    if (n <= 0) return ''
    const le99 = r.buckets.find(([le, c]) => c - (o.buckets.find((x) => x[0] === le)?.[1] ?? 0) >= 0.99 * n)?.[0]
    return `${kind}: ${n.toLocaleString('en-US')} reads, mean ${ms(((r.sum - o.sum) / n) * 1000)} ms, p99 <= ${le99 !== undefined ? `${le99 * 1000} ms` : '> 10 s'}`
  }).filter(Boolean).join('; ') || 'none'
}

/** The series of one metric in Prometheus's text exposition (`name_bucket{le="0.1",kind="one"} 3`). */
function samplesOf(text: string, metric: string): Sample[] {
  const out: Sample[] = []
  for (const m of text.matchAll(/^([a-zA-Z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/gm)) {
    if (m[1] !== metric && !m[1].startsWith(`${metric}_`)) continue
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]))
    out.push({ metricName: m[1], labels, value: Number(m[3]) })
  }
  return out
}

/** ingest, the aggregator and billing-api in this process (the bench's main thread is the API's). */
async function inProcessPlatform(id: number): Promise<Platform> {
  const { loadConfigOrExit } = await import('../platform/config.js')
  const { startPlatform } = await import('../scripts/composition-root.js')
  const { createTenant } = await import('../billing-api/tenants/index.js')
  const { registry } = await import('../platform/metrics.js')
  const base = loadConfigOrExit()
  const chdbPath = join(base.dataDir, 'bench-entitlement-chdb')
  rmSync(chdbPath, { recursive: true, force: true })
  const spoolDir = join(base.dataDir, 'bench-entitlement-spool')
  rmSync(spoolDir, { recursive: true, force: true })
  const config = {
    ...base, clickhouse: { ...base.clickhouse, chdbPath }, port: 0, logLevel: 'fatal',
    eventsTopic: `events-bench-${id}`, aggregatorGroupId: `aggregator-bench-${id}`, redisPrefix: `mlbench-${id}`, spool: { ...base.spool, dir: spoolDir },
    aggregatorThread: (args.thread ?? base.aggregatorThread) as 'worker' | 'main',
    // The limits stay on (each request still pays its Redis check) but above what the bench sends.
    requestRateLimit: { ...base.requestRateLimit, perKey: 1_000_000_000, perTenant: 1_000_000_000 },
  }
  // The local broker creates topics on first use with 4 partitions; this one needs KAFKA_EVENTS_PARTITIONS.
  if (existsSync(join(base.dataDir, 'kafka', 'control'))) {
    writeFileSync(join(base.dataDir, 'kafka', 'control'), `topic ${config.eventsTopic} ${base.eventsPartitions}\n`)
    await new Promise((r) => setTimeout(r, 500))
  }
  const platform = await startPlatform(config, { services: ['ingest', 'aggregator', 'billing-api'], migrate: true, schedule: false, relay: false })
  const loop = monitorEventLoopDelay({ resolution: 10 })
  return {
    url: platform.url, ingestUrl: platform.url,
    topology: 'all-in-one: ingest, the aggregator and billing-api in this process (startPlatform, scripts/composition-root.ts)',
    placement: `aggregator on the ${config.aggregatorThread === 'worker' ? 'worker thread' : 'main thread'}, ingest on the ${config.ingestThread === 'worker' ? 'worker thread' : 'main thread'} (INGEST_THREAD)`,
    scopeLoad: config.live.scopeLoad,
    tenantKey: async (name) => (await createTenant(platform.ctx.orm.em.fork(), { name }, config.apiKeyHashing)).apiKey,
    sql: (q) => platform.ctx.orm.em.fork().getConnection().execute(q),
    written: async () => (await platform.ctx.aggregatorControl!.consumers()).reduce((n, a) => n + a.events, 0),
    reads: async () => readsOf((await registry.getSingleMetric('meterline_live_counter_read_seconds')?.get())?.values ?? []),
    loop: {
      what: "the platform's process",
      start: async () => void loop.enable(),
      p99: async () => (loop.disable(), loop.percentile(99) / 1e6),
    },
    processes: () => [{ name: 'all-in-one (this process)', pid: process.pid, port: 0, kind: 'all-in-one' }],
    rss: { what: '', now: () => process.memoryUsage().rss },
    stop: async () => {
      // A stop that hangs (seen after the run) must not keep the figures and the profile back.
      await Promise.race([platform.stop(), new Promise((r) => setTimeout(r, 20_000).unref())])
      rmSync(spoolDir, { recursive: true, force: true })
    },
  }
}

/** The processes topology as a child, reached over HTTP and SQL only. */
async function processesPlatform(id: number, port: number): Promise<Platform> {
  const { loadConfigOrExit } = await import('../platform/config.js')
  const { default: pg } = await import('pg')
  const config = loadConfigOrExit()
  const platform = await startPlatformChild({
    topology: 'processes', config, dir: join(config.dataDir, 'bench-entitlement'), fresh: true, port, id: String(id),
    // The limits stay on (each request still pays its Redis check) but above what the bench sends.
    env: { RATE_LIMIT_PER_KEY: '1000000000', RATE_LIMIT_PER_TENANT: '1000000000' },
    // every role starts in turn (the aggregators one after another): a minute on two busy cores
  })
  const pool = new pg.Pool({ connectionString: config.databaseUrl, max: 2 })
  const metrics = async () => (await fetch(`${platform.apiUrl}/metrics`)).text()
  const of = (kind: string) => platform.processes().filter((p) => p.kind === kind)
  // GET /aggregator/consumers of each aggregator process (a restarting one counts none).
  const consumersOf = async (p: PlatformProcess) => {
    const res = await fetch(`http://127.0.0.1:${p.port}/aggregator/consumers`, { signal: AbortSignal.timeout(2000) }).catch(() => undefined)
    return res?.ok ? ((await res.json()) as { items: { events: number }[] }).items : []
  }
  const aggregators = of('aggregator')
  return {
    url: platform.apiUrl, ingestUrl: platform.ingestUrl,
    topology: `processes (scripts/platform-processes.ts): ${platform.processes().map((p) => `${p.name} :${p.port}`).join(', ')}`,
    placement: `ingest, ${aggregators.length} aggregator process${aggregators.length === 1 ? '' : 'es'} (TOPOLOGY_AGGREGATORS) and billing-api each a process of its own, ClickHouse through the local endpoint`,
    scopeLoad: config.live.scopeLoad,
    // The demo tenant of the fresh data directory: a new tenant with nothing in it.
    tenantKey: async () => platform.key,
    sql: async (q) => (await pool.query(q)).rows as Record<string, unknown>[],
    written: async () => (await Promise.all(of('aggregator').map(consumersOf))).flat().reduce((n, a) => n + a.events, 0),
    reads: async () => readsOf(samplesOf(await metrics(), 'meterline_live_counter_read_seconds')),
    loop: {
      // prom-client's monitorEventLoopDelay (10 ms resolution, as in this process's), reset by each /metrics read
      what: "billing-api's process, its nodejs_eventloop_lag_p99_seconds",
      // prom-client resets its histogram at every collect: this read starts the window.
      start: async () => void (await metrics()),
      p99: async () => (samplesOf(await metrics(), 'nodejs_eventloop_lag_p99_seconds')[0]?.value ?? NaN) * 1000,
    },
    processes: platform.processes,
    rss: { what: ' (every process together)', now: () => platform.processes().reduce((n, p) => n + rssOfPid(p.pid), 0) },
    stop: async () => {
      await pool.end()
      await platform.stop()
    },
  }
}

type Api = (method: string, path: string, body?: unknown) => Promise<any>
function apiOf(url: string, apiKey: string): Api {
  return async (method, path, body) => {
    const res = await fetch(url + path, { method, headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const json = await res.json()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
    return json
  }
}

/** The load generator, a child process of this one. */
function runLoad(load: Load): Promise<LoadResult> {
  return new Promise<LoadResult>((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--load', JSON.stringify(load)], { execArgv: ['--import', 'tsx'] })
    child.once('message', (m) => resolve(m as LoadResult))
    child.once('error', reject)
    child.once('exit', (code) => code !== 0 && reject(new Error(`the load generator exited with ${code}`)))
  })
}

/** The plan, F meters, features and entitlements, C customers subscribed, and the probe's subscription (the cold run's template). */
async function setUp(api: Api): Promise<{ template: { id: string; customer_id: string }; seconds: string }> {
  const t0 = performance.now()
  const plan = await api('POST', '/v1/plans', {
    name: 'Bench', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
  })
  for (let f = 0; f < FEATURES; f++) {
    const meter = await api('POST', '/v1/meters', { name: `m${f}`, event_name: `e${f}`, aggregation: { type: 'SUM', field: 'n' } })
    const feature = await api('POST', '/v1/features', { name: `f${f}`, lookup_key: `f${f}`, type: 'metered', meter_id: meter.id })
    await api('POST', '/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: feature.id, usage_limit: 1_000_000_000, usage_reset_period: 'MONTHLY' })
  }
  const start = new Date(Date.now() - 40 * 86_400_000)
  start.setUTCHours(0, 0, 0, 0)
  const subscribe = async (ext: string) => {
    const customer = await api('POST', '/v1/customers', { external_id: ext })
    return api('POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: start.toISOString() })
  }
  for (let i = 0; i < CUSTOMERS; i += 8) await Promise.all(Array.from({ length: Math.min(8, CUSTOMERS - i) }, (_, j) => subscribe(`cust-${i + j}`)))
  const template = await subscribe('probe')
  return { template, seconds: ((performance.now() - t0) / 1000).toFixed(1) }
}

/**
 * Usage of the last days through ingest (the meters get activated first), counted by the
 * platform's aggregator (all-in-one: in its worker thread or on the main thread, --thread), until
 * its consumers report every seed event written.
 */
async function seed(platform: Platform, ingest: Api): Promise<{ events: number; seconds: string }> {
  const t1 = performance.now()
  let seq = 0
  for (let c = 0; c < CUSTOMERS; c += 50) {
    const events = []
    for (let i = c; i < Math.min(CUSTOMERS, c + 50); i++) {
      for (let k = 0; k < EVENTS; k++) {
        events.push({ event_id: `seed-${seq++}`, event_name: `e${k % FEATURES}`, external_customer_id: `cust-${i}`, timestamp: new Date(Date.now() - 60_000 - ((seq * 7_919) % (5 * 86_400_000))).toISOString(), source: 'api', properties: { n: 3 } })
      }
    }
    await ingest('POST', '/v1/events/raw/bulk', { events })
  }
  for (let i = 0; (await platform.written()) < seq; i++) {
    if (i % 25 === 0) console.error(`seed: ${await platform.written()} of ${seq} events written`)
    await new Promise((r) => setTimeout(r, 200))
  }
  return { events: seq, seconds: ((performance.now() - t1) / 1000).toFixed(1) }
}

/** The measured run: checks while events stream, with the event-loop delay, counter reads, CPU and RSS of the platform's processes. */
async function hotRun(platform: Platform, load: Omit<Load, 'rate' | 'seconds'>) {
  await runLoad({ ...load, rate: Math.min(RATE, 2000), seconds: 5 }) // warm-up
  await platform.loop.start()
  const readsBefore = await platform.reads()
  const cpuBefore = cpuByProcess(platform.processes())
  const rss = rssPeaks(() => platform.processes())
  const hot = await runLoad({ ...load, rate: RATE, seconds: SECONDS })
  const loopP99 = await platform.loop.p99()
  rss.stop()
  const perProcess = perProcessFigures(cpuBefore, cpuByProcess(platform.processes()), rss.maxByProcess)
  return { hot, loopP99, rssHot: platform.rss.now(), readsBefore, readsHot: await platform.reads(), perProcess }
}

/** Cold: K customers copied in SQL from the probe's rows, never checked before, one check each. */
async function coldRun(platform: Platform, template: { id: string; customer_id: string }, id: number, load: Omit<Load, 'rate' | 'seconds'>) {
  const t2 = performance.now()
  const cols = async (table: string) => (await platform.sql(`SELECT column_name FROM information_schema.columns WHERE table_name = '${table}' ORDER BY ordinal_position`)).map((r) => String(r.column_name))
  const copy = async (table: string, where: string, replace: Record<string, string>) => {
    const c = await cols(table)
    await platform.sql(`INSERT INTO ${table} (${c.join(', ')}) SELECT ${c.map((x) => replace[x] ?? x).join(', ')} FROM ${table}, generate_series(0, ${COLD - 1}) g WHERE ${where}`)
  }
  await copy('customers', `id = '${template.customer_id}'`, { id: `'cust_cold_${id}_' || g`, external_id: `'cold-' || g` })
  await copy('subscriptions', `id = '${template.id}'`, { id: `'sub_cold_${id}_' || g`, customer_id: `'cust_cold_${id}_' || g` })
  const setupSeconds = ((performance.now() - t2) / 1000).toFixed(1)
  const cold = await runLoad({ ...load, rate: 0, seconds: 0, cold: { prefix: 'cold-', count: COLD } })
  return { cold, setupSeconds, rss: platform.rss.now() }
}

async function main(): Promise<void> {
  const id = Date.now()
  const platform = TOPOLOGY === 'processes' ? await processesPlatform(id, Number(args.port)) : await inProcessPlatform(id)
  try {
    const key = await platform.tenantKey(`bench-live-${id}`)
    const setup = await setUp(apiOf(platform.url, key))
    const seeded = await seed(platform, apiOf(platform.ingestUrl, key))
    // The platform's aggregator activates the meters on its own (it backfills the seed above).
    await new Promise((r) => setTimeout(r, 3000))
    const la = loadavg()[0]
    const load = { url: platform.url, ingestUrl: platform.ingestUrl, key, customers: CUSTOMERS, features: FEATURES, connections: CONNECTIONS }
    const hot = await hotRun(platform, load)
    const cold = COLD > 0 ? await coldRun(platform, setup.template, id, load) : undefined
    const rows: [string, string][] = [
      ['machine', `${cpus().length} vCPU (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${la.toFixed(1)} before the run`],
      ['topology (--topology)', platform.topology],
      ['counter scope loads (LIVE_COUNTER_SCOPE_LOAD)', String(platform.scopeLoad)],
      ['set-up', `${CUSTOMERS.toLocaleString('en-US')} customers x ${FEATURES} features through the API in ${setup.seconds} s; ${seeded.events.toLocaleString('en-US')} seed events through ingest in ${seeded.seconds} s; ${platform.placement}`],
      ...hotRows(platform, hot),
      ...(cold ? coldRows(platform, cold, await platform.reads(), hot.readsHot) : []),
    ]
    const errors = [...hot.hot.errors, ...(cold?.cold.errors ?? [])]
    if (errors.length) rows.push(['errors (first)', errors.join(' | ').slice(0, 300)])
    const w = Math.max(...rows.map((r) => r[0].length))
    console.log(`| ${'measure'.padEnd(w)} | result |\n|${'-'.repeat(w + 2)}|--------|`)
    for (const [k, v] of rows) console.log(`| ${k.padEnd(w)} | ${v} |`)
  } finally {
    await platform.stop()
  }
}

function hotRows(platform: Platform, { hot, loopP99, rssHot, readsBefore, readsHot, perProcess }: Awaited<ReturnType<typeof hotRun>>): [string, string][] {
  return [
    [`events streamed (asked ${RATE.toLocaleString('en-US')}/s)`, `${Math.round(hot.accepted / hot.seconds).toLocaleString('en-US')}/s accepted, ${hot.refused} refused`],
    [`checks, ${CONNECTIONS} connections, ${SECONDS} s`, `${Math.round(hot.checks.length / hot.seconds).toLocaleString('en-US')} checks/s; p50 / p99 / max ${ms(pct(hot.checks, 50))} / ${ms(pct(hot.checks, 99))} / ${ms(Math.max(...hot.checks))} ms; ${hot.failed} failed`],
    ['staleness (ack -> visible in the check), p50 / p99', `${ms(pct(hot.staleness, 50))} / ${ms(pct(hot.staleness, 99))} ms (${hot.staleness.length} probes)`],
    [`event-loop delay p99 (${platform.loop.what})`, `${ms(loopP99)} ms`],
    [`RSS after the run${platform.rss.what}`, `${Math.round(rssHot / 1048576)} MiB`],
    ['per process during the run: CPU s / RSS max', perProcessText(perProcess)],
    ['counter bucket reads during the run', readsText(readsBefore, readsHot)],
  ]
}

function coldRows(platform: Platform, { cold, setupSeconds, rss }: Awaited<ReturnType<typeof coldRun>>, readsCold: Reads, readsHot: Reads): [string, string][] {
  return [
    [`cold: ${COLD.toLocaleString('en-US')} new customers, one check each, ${CONNECTIONS} in flight`,
      `${Math.round(cold.checks.length / cold.seconds).toLocaleString('en-US')} checks/s; p50 / p99 / max ${ms(pct(cold.checks, 50))} / ${ms(pct(cold.checks, 99))} / ${ms(Math.max(...cold.checks))} ms; ${cold.failed} failed (rows copied in ${setupSeconds} s)`],
    [`RSS after the cold run${platform.rss.what}`, `${Math.round(rss / 1048576)} MiB`],
    ['counter bucket reads during the cold run', readsText(readsHot, readsCold)],
  ]
}
