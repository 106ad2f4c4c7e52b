// bench:entitlement-check: the live entitlement check under ingest load, everything in one
// process (ingest, aggregator, billing-api; chDB binds its data directory to one process).
// C customers (default 1,000) on one plan granting F metered features (default 20, one SUM
// meter each, a monthly hard limit nobody reaches), with E usage events per customer over the
// last days sent through ingest. Then, for D seconds, from a worker
// process (so the load generator does not share the platform's event loop):
// - events stream through POST /v1/events/raw/bulk at R events/s (default 10,000), random
//   customer and meter, timestamped now;
// - 32 keep-alive connections run POST /v1/entitlements/check on random (customer, feature);
// - a probe sends one event at a time for a customer of its own and polls the check until it
//   shows: staleness = ack of the event -> first check that includes it.
// Printed: checks/s, p50/p99/max, staleness p50/p99, event-loop delay p99 of the platform's
// thread, RSS. Then the cold-cache run: K more customers (default 100,000) copied in SQL from a
// template, and one check for each, 32 in flight (every check misses the caches).
// Asserts nothing about time.
//   npm run bench:entitlement-check -- --customers 1000 --features 20 --rate 10000 --seconds 30 --cold 100000 [--thread worker|main]
import { parseArgs } from 'node:util'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fork } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const { values: args } = parseArgs({
  options: {
    customers: { type: 'string' }, features: { type: 'string' }, events: { type: 'string' }, rate: { type: 'string' },
    seconds: { type: 'string' }, cold: { type: 'string' }, connections: { type: 'string' }, load: { type: 'string' },
    /** where the platform's aggregator runs: its worker thread (AGGREGATOR_THREAD's default) or the API's main thread */
    thread: { type: 'string' },
  },
})
const CUSTOMERS = Number(args.customers ?? 1000)
const FEATURES = Number(args.features ?? 20)
const EVENTS = Number(args.events ?? 20)
const RATE = Number(args.rate ?? 10_000)
const SECONDS = Number(args.seconds ?? 30)
const COLD = Number(args.cold ?? 100_000)
const CONNECTIONS = Number(args.connections ?? 32)

interface Load {
  url: string
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
    const res = await fetch(load.url + path, { method: 'POST', headers: { 'x-api-key': load.key, 'content-type': 'application/json' }, body: JSON.stringify(body) })
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
  const { loadConfigOrExit } = await import('../platform/config.js')
  const { startPlatform } = await import('../scripts/composition-root.js')
  const { createTenant } = await import('../billing-api/tenants/index.js')
  const { registry } = await import('../platform/metrics.js')
  // The live counters' bucket reads (meterline_live_counter_read_seconds) by kind: count, mean, ~p99.
  type Reads = Map<string, { count: number; sum: number; buckets: [number, number][] }>
  const reads = async (): Promise<Reads> => {
    const out: Reads = new Map()
    const m = registry.getSingleMetric('meterline_live_counter_read_seconds')
    for (const v of (m ? (await m.get()).values : []) as { value: number; labels: Record<string, string | number>; metricName?: string }[]) {
      const kind = String(v.labels.kind)
      if (!out.has(kind)) out.set(kind, { count: 0, sum: 0, buckets: [] })
      const r = out.get(kind)!
      if (v.metricName?.endsWith('_count')) r.count = v.value
      else if (v.metricName?.endsWith('_sum')) r.sum = v.value
      else if (v.metricName?.endsWith('_bucket') && v.labels.le !== '+Inf') r.buckets.push([Number(v.labels.le), v.value])
    }
    return out
  }
  const readsText = (a: Reads, b: Reads) => [...b].map(([kind, r]) => {
    const o = a.get(kind) ?? { count: 0, sum: 0, buckets: [] }
    const n = r.count - o.count
    if (n <= 0) return ''
    const le99 = r.buckets.find(([le, c]) => c - (o.buckets.find((x) => x[0] === le)?.[1] ?? 0) >= 0.99 * n)?.[0]
    return `${kind}: ${n.toLocaleString('en-US')} reads, mean ${ms(((r.sum - o.sum) / n) * 1000)} ms, p99 <= ${le99 !== undefined ? `${le99 * 1000} ms` : '> 10 s'}`
  }).filter(Boolean).join('; ') || 'none'

  const base = loadConfigOrExit()
  const chdbPath = join(base.dataDir, 'bench-entitlement-chdb')
  rmSync(chdbPath, { recursive: true, force: true })
  const spoolDir = join(base.dataDir, 'bench-entitlement-spool')
  rmSync(spoolDir, { recursive: true, force: true })
  const id = Date.now()
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
  const run = (load: Omit<Load, 'url'>) => new Promise<LoadResult>((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['--load', JSON.stringify({ ...load, url: platform.url })], { execArgv: ['--import', 'tsx'] })
    child.once('message', (m) => resolve(m as LoadResult))
    child.once('error', reject)
    child.once('exit', (code) => code !== 0 && reject(new Error(`the load generator exited with ${code}`)))
  })
  async function call(apiKey: string, method: string, path: string, body?: unknown): Promise<any> {
    const res = await fetch(platform.url + path, { method, headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined })
    const json = await res.json()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
    return json
  }
  const sql = (q: string, params: unknown[] = []) => platform.ctx.orm.em.fork().getConnection().execute(q, params)

  try {
    const tenant = await createTenant(platform.ctx.orm.em.fork(), { name: `bench-live-${id}` }, config.apiKeyHashing)
    const key = tenant.apiKey
    const t0 = performance.now()
    const plan = await call(key, 'POST', '/v1/plans', {
      name: 'Bench', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
    })
    for (let f = 0; f < FEATURES; f++) {
      const meter = await call(key, 'POST', '/v1/meters', { name: `m${f}`, event_name: `e${f}`, aggregation: { type: 'SUM', field: 'n' } })
      const feature = await call(key, 'POST', '/v1/features', { name: `f${f}`, lookup_key: `f${f}`, type: 'metered', meter_id: meter.id })
      await call(key, 'POST', '/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: feature.id, usage_limit: 1_000_000_000, usage_reset_period: 'MONTHLY' })
    }
    const start = new Date(Date.now() - 40 * 86_400_000)
    start.setUTCHours(0, 0, 0, 0)
    const subscribe = async (ext: string) => {
      const customer = await call(key, 'POST', '/v1/customers', { external_id: ext })
      return call(key, 'POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: start.toISOString() })
    }
    for (let i = 0; i < CUSTOMERS; i += 8) await Promise.all(Array.from({ length: Math.min(8, CUSTOMERS - i) }, (_, j) => subscribe(`cust-${i + j}`)))
    const template = await subscribe('probe')
    const setupSeconds = ((performance.now() - t0) / 1000).toFixed(1)

    // Usage of the last days (the meters get activated first).
    const t1 = performance.now()
    // Through ingest, counted by the platform's aggregator (in its worker thread or on the main
    // thread: --thread), until its consumers report every seed event written.
    let seq = 0
    for (let c = 0; c < CUSTOMERS; c += 50) {
      const events = []
      for (let i = c; i < Math.min(CUSTOMERS, c + 50); i++) {
        for (let k = 0; k < EVENTS; k++) {
          events.push({ event_id: `seed-${seq++}`, event_name: `e${k % FEATURES}`, external_customer_id: `cust-${i}`, timestamp: new Date(Date.now() - 60_000 - ((seq * 7_919) % (5 * 86_400_000))).toISOString(), source: 'api', properties: { n: 3 } })
        }
      }
      await call(key, 'POST', '/v1/events/raw/bulk', { events })
    }
    const written = async () => (await platform.ctx.aggregatorControl!.consumers()).reduce((n, a) => n + a.events, 0)
    for (let i = 0; (await written()) < seq; i++) {
      if (i % 25 === 0) console.error(`seed: ${await written()} of ${seq} events written`)
      await new Promise((r) => setTimeout(r, 200))
    }
    const loadSeconds = ((performance.now() - t1) / 1000).toFixed(1)
    // The platform's aggregator activates the meters on its own (it backfills the seed above).
    await new Promise((r) => setTimeout(r, 3000))

    const loop = monitorEventLoopDelay({ resolution: 10 })
    const la = loadavg()[0]
    await run({ key, customers: CUSTOMERS, features: FEATURES, rate: Math.min(RATE, 2000), seconds: 5, connections: CONNECTIONS }) // warm-up
    loop.enable()
    const readsBefore = await reads()
    const hot = await run({ key, customers: CUSTOMERS, features: FEATURES, rate: RATE, seconds: SECONDS, connections: CONNECTIONS })
    loop.disable()
    const rssHot = process.memoryUsage().rss
    const readsHot = await reads()

    // Cold: K customers copied from the probe's rows, never checked before.
    let cold: LoadResult | undefined
    let coldSetup = '0'
    if (COLD > 0) {
      const t2 = performance.now()
      const cols = async (table: string) => ((await sql(`SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position`, [table])) as { column_name: string }[]).map((r) => r.column_name)
      const copy = async (table: string, where: string, replace: Record<string, string>) => {
        const c = await cols(table)
        await sql(`INSERT INTO ${table} (${c.join(', ')}) SELECT ${c.map((x) => replace[x] ?? x).join(', ')} FROM ${table}, generate_series(0, ${COLD - 1}) g WHERE ${where}`)
      }
      await copy('customers', `id = '${template.customer_id}'`, { id: `'cust_cold_${id}_' || g`, external_id: `'cold-' || g` })
      await copy('subscriptions', `id = '${template.id}'`, { id: `'sub_cold_${id}_' || g`, customer_id: `'cust_cold_${id}_' || g` })
      coldSetup = ((performance.now() - t2) / 1000).toFixed(1)
      cold = await run({ key, customers: CUSTOMERS, features: FEATURES, rate: 0, seconds: 0, connections: CONNECTIONS, cold: { prefix: 'cold-', count: COLD } })
    }

    const loopP99 = loop.percentile(99) / 1e6
    const rows: [string, string][] = [
      ['machine', `${cpus().length} vCPU (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${la.toFixed(1)} before the run`],
      ['counter scope loads (LIVE_COUNTER_SCOPE_LOAD)', String(config.live.scopeLoad)],
      ['set-up', `${CUSTOMERS.toLocaleString('en-US')} customers x ${FEATURES} features through the API in ${setupSeconds} s; ${seq.toLocaleString('en-US')} seed events through ingest in ${loadSeconds} s; aggregator on the ${config.aggregatorThread === 'worker' ? 'worker thread' : 'main thread'}, ingest on the ${config.ingestThread === 'worker' ? 'worker thread' : 'main thread'} (INGEST_THREAD)`],
      [`events streamed (asked ${RATE.toLocaleString('en-US')}/s)`, `${Math.round(hot.accepted / hot.seconds).toLocaleString('en-US')}/s accepted, ${hot.refused} refused`],
      [`checks, ${CONNECTIONS} connections, ${SECONDS} s`, `${Math.round(hot.checks.length / hot.seconds).toLocaleString('en-US')} checks/s; p50 / p99 / max ${ms(pct(hot.checks, 50))} / ${ms(pct(hot.checks, 99))} / ${ms(Math.max(...hot.checks))} ms; ${hot.failed} failed`],
      ['staleness (ack -> visible in the check), p50 / p99', `${ms(pct(hot.staleness, 50))} / ${ms(pct(hot.staleness, 99))} ms (${hot.staleness.length} probes)`],
      ["event-loop delay p99 (the platform's process)", `${ms(loopP99)} ms`],
      ['RSS after the run', `${Math.round(rssHot / 1048576)} MiB`],
      ['counter bucket reads during the run', readsText(readsBefore, readsHot)],
    ]
    if (cold) {
      rows.push([`cold: ${COLD.toLocaleString('en-US')} new customers, one check each, ${CONNECTIONS} in flight`,
        `${Math.round(cold.checks.length / cold.seconds).toLocaleString('en-US')} checks/s; p50 / p99 / max ${ms(pct(cold.checks, 50))} / ${ms(pct(cold.checks, 99))} / ${ms(Math.max(...cold.checks))} ms; ${cold.failed} failed (rows copied in ${coldSetup} s)`])
      rows.push(['RSS after the cold run', `${Math.round(process.memoryUsage().rss / 1048576)} MiB`])
      rows.push(['counter bucket reads during the cold run', readsText(readsHot, await reads())])
    }
    const errors = [...hot.errors, ...(cold?.errors ?? [])]
    if (errors.length) rows.push(['errors (first)', errors.join(' | ').slice(0, 300)])
    const w = Math.max(...rows.map((r) => r[0].length))
    console.log(`| ${'measure'.padEnd(w)} | result |\n|${'-'.repeat(w + 2)}|--------|`)
    for (const [k, v] of rows) console.log(`| ${k.padEnd(w)} | ${v} |`)
  } finally {
    // A stop that hangs (seen after the run) must not keep the figures and the profile back.
    await Promise.race([platform.stop(), new Promise((r) => setTimeout(r, 20_000).unref())])
    rmSync(spoolDir, { recursive: true, force: true })
  }
  // Something the platform leaves behind keeps the loop alive; exiting also writes --cpu-prof.
  process.exit(0)
}
