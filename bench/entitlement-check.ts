// bench:entitlement-check: C customers (default 1,000) on one plan whose metered feature has a
// monthly limit, with E usage events each (default 1,000) over the last 30 days written through
// the aggregator's own write stage into the meter buckets; then N entitlement checks
// (POST /v1/entitlements/check, default 2,000) over HTTP on random customers, one at a time and
// with 8 in flight. Prints p50 / p99 / max latency; asserts nothing about time.
//   npm run bench:entitlement-check -- --customers 1000 --events 1000 --requests 2000
import { parseArgs } from 'node:util'
import { rmSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { join } from 'node:path'
import { loadConfig, loadConfigOrExit } from '../platform/config.js'
import { startPlatform } from '../scripts/composition-root.js'
import { createTenant } from '../billing-api/tenants/index.js'
import { postgresMeterSource } from '../billing-api/meters/index.js'
import { openStandaloneWriter } from '../aggregator/writer.js'
import { ShardFence } from '../aggregator/shard-fence.js'
import type { UsageEvent } from '../schemas/events.js'
import { queryMeterUsage } from '../clickhouse/queries/meter-usage.js'
import { CustomerSchema } from '../billing-api/customers/customer.entity.js'
import { customerGrants } from '../billing-api/entitlements/index.js'

const { values: args } = parseArgs({ options: { customers: { type: 'string' }, events: { type: 'string' }, requests: { type: 'string' } } })
const CUSTOMERS = Number(args.customers ?? 1000)
const EVENTS = Number(args.events ?? 1000)
const REQUESTS = Number(args.requests ?? 2000)
const NOW = Date.now()
const DAY = 86_400_000
const START = new Date(NOW - 40 * DAY)
START.setUTCHours(0, 0, 0, 0)

const base = loadConfigOrExit()
const chdbPath = join(base.dataDir, 'bench-entitlement-chdb')
rmSync(chdbPath, { recursive: true, force: true })
const config = { ...base, clickhouse: { ...base.clickhouse, chdbPath }, port: 0, logLevel: 'fatal' }
const platform = await startPlatform(config, { services: ['billing-api'], migrate: true, schedule: false, relay: false })

async function call(apiKey: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(platform.url + path, {
    method, headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  })
  const json = await res.json()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]
const ms = (x: number) => x.toFixed(1)

try {
  const tenant = await createTenant(platform.ctx.orm.em.fork(), { name: `bench-entitlements-${NOW}` }, config.apiKeyHashing)
  const key = tenant.apiKey
  const meter = await call(key, 'POST', '/v1/meters', { name: 'Tokens', event_name: 'llm', aggregation: { type: 'SUM', field: 'tokens' } })
  const feature = await call(key, 'POST', '/v1/features', { name: 'Tokens', lookup_key: 'tokens', type: 'metered', meter_id: meter.id })
  const plan = await call(key, 'POST', '/v1/plans', {
    name: 'Bench', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
  })
  await call(key, 'POST', '/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: feature.id, usage_limit: 400_000, usage_reset_period: 'MONTHLY' })
  const t0 = performance.now()
  for (let i = 0; i < CUSTOMERS; i += 4) {
    await Promise.all(Array.from({ length: Math.min(4, CUSTOMERS - i) }, async (_, j) => {
      const customer = await call(key, 'POST', '/v1/customers', { external_id: `cust-${i + j}` })
      await call(key, 'POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: START.toISOString() })
    }))
  }
  const setupSeconds = ((performance.now() - t0) / 1000).toFixed(1)

  const t1 = performance.now()
  const stage = (await openStandaloneWriter({ ch: platform.ctx.ch, pg: ShardFence.pool(loadConfig(process.env).databaseUrl), meters: postgresMeterSource(platform.ctx.orm), log: console.error })).stage
  let offset = 0n
  let seq = 0
  const pending: Promise<unknown>[] = []
  for (let c = 0; c < CUSTOMERS; c += 20) {
    const events: UsageEvent[] = []
    for (let i = c; i < Math.min(CUSTOMERS, c + 20); i++) {
      for (let k = 0; k < EVENTS; k++) {
        events.push({
          event_id: `ev-${seq++}`, event_name: 'llm', external_customer_id: `cust-${i}`, customer_id: null,
          timestamp: NOW - 1000 - ((seq * 7_919_377) % (30 * DAY)), source: 'api', properties: `{"tokens":${1 + ((seq * 31) % 400)}}`,
        })
      }
    }
    const at = BigInt(Math.floor(Number(offset) / 4))
    pending.push(stage.add({ stream: `bench-ent/${Number(offset) % 4}`, first: at, last: at, records: [{ offset: at, batch: { batch_id: `b${offset}`, tenant_id: tenant.tenantId, environment_id: tenant.environments.production, ingested_at: Date.now(), events } }] }))
    offset++
    if (pending.length >= 4) await pending.shift()
  }
  await Promise.all(pending)
  const loadSeconds = ((performance.now() - t1) / 1000).toFixed(1)

  let rnd = 12345
  const next = () => ((rnd = (rnd * 1103515245 + 12345) % 2147483648), rnd)
  const once = async () => {
    const body = { external_customer_id: `cust-${next() % CUSTOMERS}`, feature_lookup_key: 'tokens' }
    const t = performance.now()
    await call(key, 'POST', '/v1/entitlements/check', body)
    return performance.now() - t
  }
  const load = loadavg()[0]
  for (let i = 0; i < 50; i++) await once() // warm-up
  const serial: number[] = []
  for (let i = 0; i < REQUESTS; i++) serial.push(await once())
  const parallel: number[] = []
  const tp = performance.now()
  await Promise.all(Array.from({ length: 8 }, async () => {
    for (let i = 0; i < REQUESTS / 8; i++) parallel.push(await once())
  }))
  const parallelSeconds = (performance.now() - tp) / 1000
  // The parts of one check, alone: the usage read (ClickHouse) and the grant lookup (Postgres).
  const period = { start: new Date(Date.UTC(new Date(NOW).getUTCFullYear(), new Date(NOW).getUTCMonth(), START.getUTCDate())), end: new Date(NOW + DAY) }
  const chOnly: number[] = []
  const pgOnly: number[] = []
  const floor: number[] = []
  for (let i = 0; i < Math.min(REQUESTS, 500); i++) {
    const ext = `cust-${next() % CUSTOMERS}`
    let t = performance.now()
    await queryMeterUsage(platform.ctx.ch, { tenantId: tenant.tenantId, environmentId: tenant.environments.production, meterId: meter.id, aggregation: 'SUM', externalCustomerId: ext, ...period })
    chOnly.push(performance.now() - t)
    t = performance.now()
    await platform.ctx.ch.query('SELECT 1', {})
    floor.push(performance.now() - t)
    t = performance.now()
    const em = platform.ctx.orm.em.fork()
    const customer = await em.findOneOrFail(CustomerSchema, { tenant_id: tenant.tenantId, environment_id: tenant.environments.production, external_id: ext })
    await customerGrants(em, { tenant_id: tenant.tenantId, environment_id: tenant.environments.production }, customer.id, [feature.id], new Date())
    pgOnly.push(performance.now() - t)
  }

  const table: [string, string][] = [
    ['machine', `${cpus().length} vCPU (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${load.toFixed(1)} at the start of the checks`],
    ['customers x events (last 30 days, via the write stage)', `${CUSTOMERS.toLocaleString('en-US')} x ${EVENTS.toLocaleString('en-US')} = ${seq.toLocaleString('en-US')} in ${loadSeconds} s`],
    ['setup through the API (customers, subscriptions)', `${setupSeconds} s`],
    [`${REQUESTS} checks, 1 in flight: p50 / p99 / max`, `${ms(pct(serial, 50))} / ${ms(pct(serial, 99))} / ${ms(Math.max(...serial))} ms`],
    [`${parallel.length} checks, 8 in flight: p50 / p99 / max`, `${ms(pct(parallel, 50))} / ${ms(pct(parallel, 99))} / ${ms(Math.max(...parallel))} ms (${Math.round(parallel.length / parallelSeconds)} checks/s)`],
    [`usage read alone (ClickHouse buckets): p50 / p99`, `${ms(pct(chOnly, 50))} / ${ms(pct(chOnly, 99))} ms`],
    [`an empty statement (SELECT 1) on the engine: p50 / p99`, `${ms(pct(floor, 50))} / ${ms(pct(floor, 99))} ms`],
    [`customer and grants alone (Postgres): p50 / p99`, `${ms(pct(pgOnly, 50))} / ${ms(pct(pgOnly, 99))} ms`],
  ]
  const w = Math.max(...table.map((r) => r[0].length))
  console.log(`| ${'measure'.padEnd(w)} | result |\n|${'-'.repeat(w + 2)}|--------|`)
  for (const [k, v] of table) console.log(`| ${k.padEnd(w)} | ${v} |`)
} finally {
  await platform.stop()
}
