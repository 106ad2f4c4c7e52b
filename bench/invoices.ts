// bench:invoices: S subscriptions (default 1,000), each with 10 usage lines of mixed price models
// (flat per unit, tiered slab, tiered volume, package) and a month of usage written through the
// aggregator's write stage, then the period-end billing job run exactly as the scheduler runs it
// (a BullMQ job, drafts persisted in Postgres). Prints invoices/s and the time per invoice.
//   npm run bench:invoices -- --subscriptions 1000 --events-per-line 30
// It prints numbers; it asserts only that every subscription got its invoice.
import { parseArgs } from 'node:util'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig, loadConfigOrExit } from '../platform/config.js'
import { startPlatform } from '../scripts/composition-root.js'
import { createTenant } from '../billing-api/tenants/index.js'
import { postgresMeterSource } from '../billing-api/meters/index.js'
import { openStandaloneWriter } from '../aggregator/writer.js'
import { ShardFence } from '../aggregator/shard-fence.js'
import { auditMeters } from '../aggregator/usage-audit.js'
import type { UsageEvent } from '../schemas/events.js'

const { values: args } = parseArgs({ options: { subscriptions: { type: 'string' }, 'events-per-line': { type: 'string' } } })
const SUBS = Number(args.subscriptions ?? 1000)
const PER_LINE = Number(args['events-per-line'] ?? 30)
const LINES = 10
const OCT = Date.parse('2026-10-01T00:00:00Z')
const OCT_MS = 31 * 86_400_000

const base = loadConfigOrExit()
const chdbPath = join(base.dataDir, 'bench-invoices-chdb')
rmSync(chdbPath, { recursive: true, force: true })
// its own job queues: another platform's recurring jobs on this Redis would bill what is being set up
const config = { ...base, clickhouse: { ...base.clickhouse, chdbPath }, port: 0, redisPrefix: `bench-invoices-${process.pid}-${Date.now()}` }
const platform = await startPlatform(config, { services: ['billing-api', 'scheduler'], migrate: true, schedule: false, relay: false })

async function call(apiKey: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(platform.url + path, {
    method, headers: { 'x-api-key': apiKey, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined,
  })
  const json = await res.json()
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`)
  return json
}
const elapsed = (t: number) => ((performance.now() - t) / 1000).toFixed(1)
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]

try {
  const t0 = performance.now()
  const tenant = await createTenant(platform.ctx.orm.em.fork(), { name: `bench-invoices-${Date.now()}` }, config.apiKeyHashing)
  const key = tenant.apiKey
  const usd = { currency: 'USD', billing_period: 'MONTHLY', type: 'USAGE', invoice_cadence: 'ARREAR' }
  const models = [
    { billing_model: 'FLAT_FEE', amount: '0.0125' },
    { billing_model: 'TIERED', tier_mode: 'SLAB', tiers: [{ up_to: 1000, unit_amount: '0.10' }, { up_to: 5000, unit_amount: '0.05' }, { up_to: null, unit_amount: '0.01' }] },
    { billing_model: 'TIERED', tier_mode: 'VOLUME', tiers: [{ up_to: 1000, unit_amount: '0.08' }, { up_to: null, unit_amount: '0.02', flat_amount: '5.00' }] },
    { billing_model: 'PACKAGE', amount: '3.00', transform_quantity: { divide_by: 500, round: 'up' } },
  ]
  const meters: any[] = []
  for (let i = 0; i < LINES; i++) {
    meters.push(await call(key, 'POST', '/v1/meters', { name: `m${i}`, event_name: `usage_${i}`, aggregation: { type: 'SUM', field: 'n' } }))
  }
  const plan = await call(key, 'POST', '/v1/plans', {
    name: 'Bench plan', prices: meters.map((m, i) => ({ ...usd, meter_id: m.id, display_name: `line ${i}`, ...models[i % models.length] })),
  })
  const customers: string[] = []
  for (let i = 0; i < SUBS; i += 20) {
    await Promise.all(Array.from({ length: Math.min(20, SUBS - i) }, async (_, j) => {
      const ext = `cust-${i + j}`
      const customer = await call(key, 'POST', '/v1/customers', { external_id: ext })
      await call(key, 'POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: new Date(OCT).toISOString() })
      customers.push(ext)
    }))
  }
  const setupSeconds = elapsed(t0)

  // A month of usage per line, through the aggregator's own write stage.
  const t1 = performance.now()
  const stage = (await openStandaloneWriter({ ch: platform.ctx.ch, pg: ShardFence.pool(loadConfig(process.env).databaseUrl), meters: postgresMeterSource(platform.ctx.orm), log: console.error })).stage
  let offset = 0n
  let seq = 0
  const pending: Promise<unknown>[] = []
  for (let c = 0; c < customers.length; c += 50) {
    const events: UsageEvent[] = []
    for (const ext of customers.slice(c, c + 50)) {
      for (let line = 0; line < LINES; line++) {
        for (let k = 0; k < PER_LINE; k++) {
          events.push({
            event_id: `ev-${seq++}`, event_name: `usage_${line}`, external_customer_id: ext, customer_id: null,
            timestamp: OCT + ((seq * 7_919_000) % OCT_MS), source: 'api', properties: `{"n":${1 + ((seq * 31) % 400)}}`,
          })
        }
      }
    }
    const at = BigInt(Math.floor(Number(offset) / 4))
    pending.push(stage.add({ stream: `bench-invoices/${Number(offset) % 4}`, first: at, last: at, records: [{ offset: at, batch: { batch_id: `b${offset}`, tenant_id: tenant.tenantId, environment_id: tenant.environments.production, ingested_at: Date.now(), events } }] }))
    offset++
    if (pending.length >= 4) await pending.shift()
  }
  await Promise.all(pending)
  const usageSeconds = elapsed(t1)

  // The period-end job, as the scheduler runs it: a BullMQ job in this process's worker.
  const t2 = performance.now()
  const invoices = await platform.scheduler!.trigger('subscription-billing', { tenant_id: tenant.tenantId }, 60 * 60_000)
  const jobMs = performance.now() - t2

  const conn = platform.ctx.orm.em.getConnection()
  const rows = await conn.execute(
    `SELECT i.created_at, (SELECT count(*) FROM invoice_line_items l WHERE l.invoice_id = i.id AND l.price_type = 'USAGE')::int AS lines
       FROM invoices i WHERE i.tenant_id = ? AND i.billing_reason = 'SUBSCRIPTION_CYCLE' ORDER BY i.created_at`,
    [tenant.tenantId],
  )
  if (rows.length !== SUBS || rows.some((r: any) => r.lines !== LINES)) {
    throw new Error(`expected ${SUBS} cycle invoices with ${LINES} usage lines each, got ${rows.length}`)
  }
  // Subscriptions are billed one after another, so the gap between two invoice rows is the time
  // one invoice took (10 usage reads, pricing, the draft and its lines written).
  const gaps = rows.slice(1).map((r: any, i: number) => new Date(r.created_at).getTime() - new Date(rows[i].created_at).getTime())

  const defs = (await postgresMeterSource(platform.ctx.orm).load()).filter((m) => m.tenant_id === tenant.tenantId)
  const audits = await auditMeters(platform.ctx.ch, defs, new Date(OCT), new Date(OCT + OCT_MS))
  const table: [string, string][] = [
    ['subscriptions x usage lines', `${SUBS.toLocaleString('en-US')} x ${LINES} (flat, slab, volume, package)`],
    ['usage events (a month, via the write stage)', `${seq.toLocaleString('en-US')} in ${usageSeconds} s`],
    ['setup through the API (meters, plan, customers, subscriptions)', `${setupSeconds} s`],
    ['period-end job (BullMQ, drafts in Postgres)', `${invoices} invoices in ${(jobMs / 1000).toFixed(2)} s`],
    ['invoices/s', `${Math.round((invoices / jobMs) * 1000)}`],
    ['time per invoice p50 / p99 / max', `${pct(gaps, 50)} / ${pct(gaps, 99)} / ${Math.max(...gaps)} ms`],
    ['audit: buckets = raw recount (usage:verify)', `${audits.filter((a) => a.same).length} of ${audits.length} meters`],
  ]
  const w = Math.max(...table.map((r) => r[0].length))
  console.log(`| ${'measure'.padEnd(w)} | result |\n|${'-'.repeat(w + 2)}|--------|`)
  for (const [k, v] of table) console.log(`| ${k.padEnd(w)} | ${v} |`)
} finally {
  await platform.stop()
}
