// Live access across two API processes: p1 runs everything (ingest, aggregator, billing-api,
// scheduler with the outbox relay), p2 only billing-api against the same Postgres, Redis and
// topics (as a second API process would). They share nothing in memory: p2 hears of Postgres
// changes through NOTIFY and of committed writes through Redis pub-sub.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { Redis } from 'ioredis'
import { ManualClock } from '../../platform/clock.js'
import type { CommittedWrite } from '../../schemas/committed-write.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { assertError } from '../../test/support/assertions.js'
import { eventually, sqlOn, startTestPlatform, type ApiClient, type TestPlatform } from '../../test/support/platform.js'
import { billDueSubscriptions } from '../billing/index.js'
import { LiveCatalog } from './catalog.js'
import { liveAccess } from './live-access.js'
import { startWritePublisher } from './write-bus.js'

const START = new Date('2026-08-01T00:00:00Z')
const clock = new ManualClock(new Date('2026-08-20T00:00:00Z'))
const committed: CommittedWrite[] = []
let p1: TestPlatform
let p2: TestPlatform

before(async () => {
  p1 = await startTestPlatform({ services: ['billing-api', 'ingest', 'aggregator', 'scheduler'], relay: true, clock, onCommittedWrite: (w) => committed.push(w) })
  const c = p1.config
  p2 = await startTestPlatform({
    services: ['billing-api'], clock,
    // A second API process of the same deployment: the same ClickHouse database, topics and Redis.
    config: { redisPrefix: c.redisPrefix, eventsTopic: c.eventsTopic, systemEventsTopic: c.systemEventsTopic, aggregatorGroupId: c.aggregatorGroupId, clickhouse: c.clickhouse },
  })
  await Promise.all([liveAccess(p1.ctx).ready, liveAccess(p2.ctx).ready])
})
after(async () => {
  await p2?.stop()
  await p1?.stop()
})

interface World {
  api: ApiClient
  api2: ApiClient
  tenantId: string
  meter: any
  feature: any
  entitlement: any
  customer: any
  sub: any
  ext: string
}

/** A SUM meter on `n`, a metered feature granted with `limit` (MONTHLY) by a plan of `prices`, one customer subscribed since August 1. */
const flatFee = [{ type: 'FIXED', billing_model: 'FLAT_FEE', amount: '10', currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }]
async function world(limit: number | null, prices: (meterId: string) => object[] = () => flatFee): Promise<World> {
  const t = await p1.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'api', event_name: 'api', aggregation: { type: 'SUM', field: 'n' } }))
  const feature = await created(t.api.post('/v1/features', { name: 'Calls', lookup_key: 'calls', type: 'metered', meter_id: meter.id }))
  const plan = await created(t.api.post('/v1/plans', { name: 'Plan', prices: prices(meter.id) }))
  const entitlement = await created(t.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: feature.id, usage_limit: limit, usage_reset_period: 'MONTHLY' }))
  const ext = `c-${Math.random().toString(36).slice(2)}`
  const customer = await created(t.api.post('/v1/customers', { external_id: ext }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: START.toISOString() }))
  return { api: t.api, api2: p2.client(t.apiKey), tenantId: t.tenantId, meter, feature, entitlement, customer, sub, ext }
}

let seq = 0
const events = (w: World, ns: number[], day = 10) =>
  ns.map((n) => ({ event_id: `e${++seq}`, event_name: 'api', external_customer_id: w.ext, timestamp: `2026-08-${String(day).padStart(2, '0')}T12:00:00Z`, properties: { n } }))
const check = async (api: ApiClient, w: World) => {
  const res = await api.post('/v1/entitlements/check', { external_customer_id: w.ext, feature_lookup_key: 'calls' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return res.body
}
async function checkUntil(api: ApiClient, w: World, usageIs: string): Promise<void> {
  let last: unknown
  await eventually(async () => {
    last = (await check(api, w)).usage
    return last === usageIs ? true : undefined
  }, `usage ${usageIs} in the check`).catch((err: Error) => {
    throw new Error(`${err.message} (last seen: ${String(last)})`)
  })
}

test('a grant changed through one process is seen by the other within 1 s', async () => {
  const w = await world(1000)
  assert.equal((await check(w.api2, w)).usage_limit, '1000') // cached in p2 now
  assert.equal((await w.api.put(`/v1/entitlements/${w.entitlement.id}`, { usage_limit: 10 })).status, 200)
  await eventually(async () => ((await check(w.api2, w)).usage_limit === '10' ? true : undefined), 'the new limit in the other process', 1000)
  // A customer record and a subscription change too (the customer's own cache entry).
  assert.equal((await w.api.post(`/v1/subscriptions/${w.sub.id}/cancel`, { cancellation_type: 'immediate' })).status, 200)
  await eventually(async () => ((await check(w.api2, w)).is_enabled === false ? true : undefined), 'the cancelled subscription in the other process', 1000)
})

test('a customer created after its external id was looked up is found at once by both processes', async () => {
  const w = await world(1000)
  const late = `late-${Math.random().toString(36).slice(2)}`
  const ask = (api: ApiClient) => api.post('/v1/entitlements/check', { external_customer_id: late, feature_lookup_key: 'calls' })
  // Both processes now remember that no customer has this external id.
  for (const api of [w.api, w.api2]) assertError(await ask(api), 404, 'not_found')
  await created(w.api.post('/v1/customers', { external_id: late }))
  assert.equal((await ask(w.api)).status, 200) // the writing process: at once
  await eventually(async () => ((await ask(w.api2)).status === 200 ? true : undefined), 'the new customer in the other process', 1000)
})

test('concurrent lookups of one external id make one query; a missing one is then remembered', async () => {
  const w = await world(1000)
  // Lookups by external id: counted per entity manager the catalog asked (one per query it sends).
  const askers = new Set<object>()
  const catalog = new LiveCatalog(() => {
    const em = p1.ctx.orm.em.fork()
    const conn = em.getConnection()
    const execute = (...args: Parameters<typeof conn.execute>) => {
      if (typeof args[0] === 'string' && args[0].includes('external_id = ?')) askers.add(em)
      return conn.execute(...args)
    }
    ;(em as unknown as { getConnection: () => unknown }).getConnection = () =>
      new Proxy(conn, { get: (target, prop) => (prop === 'execute' ? execute : Reflect.get(target, prop)) })
    return em
  }, 100)
  catalog.caching = true // as once its invalidation (LISTEN) is up; none is needed here: nothing changes
  const lookups = () => askers.size
  const scope = { tenant_id: w.tenantId, environment_id: w.customer.environment_id }
  // One series per meter of a new customer: the writes ask together.
  const missing = await Promise.all(Array.from({ length: 5 }, () => catalog.findHoldings(scope, { external_customer_id: 'nobody' })))
  assert.deepEqual(missing, [null, null, null, null, null])
  assert.equal(lookups(), 1)
  assert.equal(await catalog.findHoldings(scope, { external_customer_id: 'nobody' }), null)
  assert.equal(lookups(), 1, 'a known-missing external id costs no query')
  const found = await Promise.all(Array.from({ length: 3 }, () => catalog.findHoldings(scope, { external_customer_id: w.ext })))
  assert.deepEqual(found.map((h) => h?.customer.id), [w.customer.id, w.customer.id, w.customer.id])
  assert.equal(lookups(), 2)
})

test('usage moves forward in both processes; a write replayed after an aggregator crash is not applied twice', async () => {
  const w = await world(null)
  assert.equal((await check(w.api2, w)).usage, '0') // both counters exist before the events
  assert.equal((await check(w.api, w)).usage, '0')
  await ingestAll(w.api, events(w, [5, 7, 11]))
  await checkUntil(w.api, w, '23')
  await checkUntil(w.api2, w, '23')
  // null until the new meter's backfill is done
  await eventually(async () => (await check(w.api2, w)).usage_as_of ?? undefined, 'a usage_as_of once the meter is active')

  // The restarted aggregator says hello (every process rebuilds its counters from the buckets)
  // and replays the write that carried these events, with its identity.
  const mine = committed.filter((c) => c.buckets.some((b) => b.external_customer_id === w.ext))
  assert.ok(mine.length > 0)
  const redis = new Redis(p1.config.redisUrl)
  const replay = startWritePublisher(redis, p1.config.redisPrefix, { asOf: () => Date.now(), heartbeatMs: 60_000, log: () => undefined })
  try {
    for (const c of mine) replay.listener(c)
    // A later write of another customer, through the real path, marks a point after the replay.
    const marker = await world(null)
    await ingestAll(marker.api, events(marker, [1]))
    await checkUntil(marker.api2, marker, '1')
    assert.equal((await check(w.api2, w)).usage, '23')
    assert.equal((await check(w.api, w)).usage, '23')
    // And a third API process, started after all of it, reads the buckets and skips the replay too.
    const p3 = await startTestPlatform({ services: ['billing-api'], clock, config: { redisPrefix: p1.config.redisPrefix, clickhouse: p1.config.clickhouse } })
    try {
      await liveAccess(p3.ctx).ready
      const api3 = p3.client(w.api.apiKey)
      assert.equal((await check(api3, w)).usage, '23')
      for (const c of mine) replay.listener(c)
      await ingestAll(marker.api, events(marker, [1]))
      await checkUntil(p3.client(marker.api.apiKey), marker, '2')
      assert.equal((await check(api3, w)).usage, '23')
    } finally {
      await p3.stop()
    }
  } finally {
    replay.stop()
    await redis.quit()
  }
  // Events with the reset period's own time: an August event arriving now counts in August.
  await ingestAll(w.api, events(w, [100], 2))
  await checkUntil(w.api2, w, '123')
})

test('a burst across a hard limit fires feature.usage_limit_reached exactly once with two API processes; access closes', async () => {
  const w = await world(100)
  await created(w.api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hook', event_types: ['feature.usage_limit_reached'] }))
  assert.equal((await check(w.api2, w)).has_access, true)
  // Ten requests of 4 events of 5 (200 units) at once: the crossing may come in any of several writes.
  await Promise.all(Array.from({ length: 10 }, () => ingestAll(w.api, events(w, [5, 5, 5, 5]))))
  await checkUntil(w.api, w, '200')
  await checkUntil(w.api2, w, '200')
  const sql = sqlOn(p1)
  await eventually(async () => ((await sql(`SELECT 1 FROM webhook_deliveries WHERE tenant_id = ? AND event_name = 'feature.usage_limit_reached'`, [w.tenantId])).length > 0 ? true : undefined), 'the webhook delivery')
  // Later writes past the limit fire nothing more.
  await ingestAll(w.api, events(w, [50]))
  await checkUntil(w.api2, w, '250')
  const caps = await sql(`SELECT level, threshold::text, period_start FROM spend_cap_events WHERE tenant_id = ?`, [w.tenantId])
  assert.deepEqual(caps.map((c) => [c.level, c.threshold, new Date(c.period_start).toISOString()]), [['hard_limit', '100', '2026-08-01T00:00:00.000Z']])
  const outbox = await sql(`SELECT payload FROM system_events_outbox WHERE tenant_id = ? AND event_name = 'feature.usage_limit_reached'`, [w.tenantId])
  assert.equal(outbox.length, 1)
  assert.equal(outbox[0].payload.external_customer_id, w.ext)
  assert.equal(Number(outbox[0].payload.usage) >= 100, true)
  assert.equal((await sql(`SELECT 1 FROM webhook_deliveries WHERE tenant_id = ? AND event_name = 'feature.usage_limit_reached'`, [w.tenantId])).length, 1)
  for (const api of [w.api, w.api2]) assert.deepEqual((({ has_access, remaining }) => ({ has_access, remaining }))(await check(api, w)), { has_access: false, remaining: '0' })
})

test('the live balance equals what finalizing the period invoice leaves in the wallet, to the cent; batch check and usage summary', async () => {
  clock.set(new Date('2026-08-20T00:00:00Z'))
  const w = await world(null, (m) => [{ type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.37', meter_id: m, currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'API' }])
  const wallet = await created(w.api.post('/v1/wallets', { customer_id: w.customer.id, currency: 'USD', conversion_rate: '1' }), 200)
  await created(w.api.post(`/v1/wallets/${wallet.id}/top-up`, { credits: '100', transaction_reason: 'PURCHASED', idempotency_key: `top-${wallet.id}` }), 200)
  // 7 + 11.5 + 20 = 38.5 units x 0.37 = 14.245 -> 14.25 (one rounding per line, half-up)
  await ingestAll(w.api, events(w, [7, 11.5, 20], 9))
  await eventually(async () => ((await usage(w.api, w.meter.id, { external_customer_id: w.ext })).value === '38.5' ? true : undefined), 'usage in ClickHouse')
  const live = await eventually(async () => {
    const b = (await w.api2.get(`/v1/customers/${w.customer.id}/live-balance`)).body
    return b.wallets?.[0]?.unbilled_usage === '14.25' ? b : undefined
  }, 'the unbilled usage')
  assert.deepEqual(live.wallets, [{ wallet_id: wallet.id, wallet_type: 'PREPAID', currency: 'USD', credits: '100', balance: '100.00', unbilled_usage: '14.25', live_balance: '85.75' }])

  const batch = await w.api2.post('/v1/entitlements/check/batch', { customer_id: w.customer.id, features: [{ feature_lookup_key: 'calls' }, { feature_id: w.feature.id }] })
  assert.equal(batch.status, 200, JSON.stringify(batch.body))
  assert.deepEqual(batch.body.checks.map((c: any) => [c.feature_lookup_key, c.usage, c.has_access]), [['calls', '38.5', true], ['calls', '38.5', true]])
  assertError(await w.api2.post('/v1/entitlements/check/batch', { customer_id: w.customer.id, features: [{ feature_lookup_key: 'nope' }] }), 404, 'not_found', /feature/)
  const summary = (await w.api2.get(`/v1/customers/${w.customer.id}/usage-summary`)).body
  assert.deepEqual(summary.features.map((f: any) => [f.feature_lookup_key, f.usage, f.usage_limit, f.remaining]), [['calls', '38.5', null, null]])
  assert.deepEqual(summary.projected_amounts, [{ currency: 'USD', amount: '14.25' }])
  assert.deepEqual(summary.invoices.map((i: any) => [i.subscription_id, i.period_start, i.period_end, i.amount]), [[w.sub.id, '2026-08-01T00:00:00.000Z', '2026-09-01T00:00:00.000Z', '14.25']])
  // the same features at Flexprice's path and in its shape (no limit: unlimited, no share of it)
  const flexUsage = (await w.api2.get(`/v1/customers/usage?customer_id=${w.customer.id}`)).body
  assert.deepEqual(
    flexUsage.features.map((f: any) => [f.feature_lookup_key, f.current_usage, f.total_limit, f.is_unlimited, f.usage_percent, f.is_enabled]),
    [['calls', '38.5', null, true, null, true]],
  )
  assert.deepEqual([flexUsage.customer_id, flexUsage.pagination], [w.customer.id, { limit: 1, offset: 0, total: 1 }])

  // The stream has stopped: bill August and finalize.
  clock.set(new Date('2026-09-01T00:00:00Z'))
  await billDueSubscriptions(p1.ctx, { tenantId: w.tenantId })
  const [inv] = await sqlOn(p1)(`SELECT id FROM invoices WHERE subscription_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE'`, [w.sub.id])
  const fin = await w.api.post(`/v1/invoices/${inv.id}/finalize`, {})
  assert.equal(fin.status, 200, JSON.stringify(fin.body))
  assert.equal(fin.body.total, '14.25')
  assert.equal((await w.api.get(`/v1/wallets/${wallet.id}`)).body.balance, '85.75')
  clock.set(new Date('2026-08-20T00:00:00Z'))
})

test("another tenant's key gets 404 on every live route", async () => {
  const w = await world(10)
  const other = await p1.newTenant('other')
  await created(other.api.post('/v1/features', { name: 'Calls', lookup_key: 'calls', type: 'metered', meter_id: (await created(other.api.post('/v1/meters', { name: 'x', event_name: 'x', aggregation: { type: 'COUNT' } }))).id }))
  for (const api of [other.api, p2.client(other.apiKey)]) {
    assertError(await api.post('/v1/entitlements/check', { customer_id: w.customer.id, feature_lookup_key: 'calls' }), 404, 'not_found', /customer/)
    assertError(await api.post('/v1/entitlements/check', { external_customer_id: w.ext, feature_id: w.feature.id }), 404, 'not_found', /customer/)
    assertError(await api.post('/v1/entitlements/check/batch', { customer_id: w.customer.id, features: [{ feature_lookup_key: 'calls' }] }), 404, 'not_found', /customer/)
    assertError(await api.get(`/v1/customers/${w.customer.id}/live-balance`), 404, 'not_found', /customer/)
    assertError(await api.get(`/v1/customers/${w.customer.id}/usage-summary`), 404, 'not_found', /customer/)
    assertError(await api.get(`/v1/customers/usage?customer_id=${w.customer.id}`), 404, 'not_found', /customer/)
  }
  assertError(await w.api.post('/v1/entitlements/check/batch', { customer_id: w.customer.id, features: [] }), 400, 'validation_error', /features/)
})
