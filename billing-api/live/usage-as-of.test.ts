// The usage_as_of promise (README, "Live access"): an entitlement check or live balance stamped
// usage_as_of T includes every event acknowledged (202) before T. Repeated on new meters (created
// just before their events, while their backfill may run) and on a warm one; every answer whose
// usage_as_of is at or after the 202 must hold the request's events, whole.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { created } from '../../test/support/fixtures.js'
import { eventually, startTestPlatform, type ApiClient, type TestPlatform } from '../../test/support/platform.js'
import { liveAccess } from './live-access.js'

let p: TestPlatform
let api: ApiClient

before(async () => {
  p = await startTestPlatform({ services: ['billing-api', 'ingest', 'aggregator'] })
  await liveAccess(p.ctx).ready
  api = (await p.newTenant('as-of')).api
})
after(async () => {
  await p?.stop()
})

interface World { meterId: string; customerId: string; ext: string; sent: number }

/** A SUM meter, a metered feature granted without limit, a plan pricing it at 0.35 a unit, one customer subscribed, a wallet. */
async function world(n: number): Promise<World> {
  const meter = await created(api.post('/v1/meters', { name: `m${n}`, event_name: `e${n}`, aggregation: { type: 'SUM', field: 'n' } }))
  const feature = await created(api.post('/v1/features', { name: `F${n}`, lookup_key: `f${n}`, type: 'metered', meter_id: meter.id }))
  const plan = await created(api.post('/v1/plans', {
    name: `P${n}`,
    prices: [{ type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.35', meter_id: meter.id, currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }],
  }))
  await created(api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: feature.id, usage_limit: null, usage_reset_period: 'MONTHLY' }))
  const ext = `c${n}-${Date.now()}`
  const customer = await created(api.post('/v1/customers', { external_id: ext }))
  await created(api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: new Date(Date.now() - 86_400_000).toISOString() }))
  await created(api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD', conversion_rate: '1' }), 200)
  return { meterId: meter.id, customerId: customer.id, ext, sent: 0 }
}

let ids = 0
/** One request of 40 events (n = 1 each); resolves at its 202. */
async function send(w: World, n: number): Promise<number> {
  const at = Date.now() - 1000
  const res = await api.post('/v1/events/raw/bulk', {
    events: Array.from({ length: 40 }, () => ({ event_id: `as-of-${++ids}`, event_name: `e${n}`, external_customer_id: w.ext, timestamp: new Date(at).toISOString(), properties: { n: 1 } })),
  })
  assert.equal(res.status, 202, JSON.stringify(res.body))
  w.sent += 40
  return Date.now()
}

/** Checks and live balances fired at once until their usage_as_of passes the 202; each answer that claims it must hold every event sent. */
async function answersKeepThePromise(w: World, n: number, ackedAt: number, broken: string[]): Promise<void> {
  const deadline = Date.now() + 20_000
  for (;;) {
    const answers = await Promise.all([
      ...[0, 1, 2].map(async () => {
        const r = await api.post('/v1/entitlements/check', { external_customer_id: w.ext, feature_lookup_key: `f${n}` })
        assert.equal(r.status, 200, JSON.stringify(r.body))
        return { kind: 'check', asOf: r.body.usage_as_of as string | null, holds: r.body.usage === String(w.sent), saw: r.body.usage }
      }),
      ...[0, 1].map(async () => {
        const r = await api.get(`/v1/customers/${w.customerId}/live-balance`)
        assert.equal(r.status, 200, JSON.stringify(r.body))
        const expected = (w.sent * 0.35).toFixed(2)
        return { kind: 'balance', asOf: r.body.usage_as_of as string | null, holds: r.body.wallets[0].unbilled_usage === expected, saw: r.body.wallets[0].unbilled_usage }
      }),
    ])
    const claiming = answers.filter((a) => a.asOf !== null && Date.parse(a.asOf) >= ackedAt)
    for (const a of claiming) if (!a.holds) broken.push(`meter ${n}: a ${a.kind} stamped ${a.asOf}, after the 202 at ${new Date(ackedAt).toISOString()}, saw ${a.saw} of ${w.sent} events`)
    if (claiming.length === answers.length) return
    assert.ok(Date.now() < deadline, `meter ${n}: usage_as_of did not pass the 202 in 20 s (${JSON.stringify(answers)})`)
  }
}

test('usage_as_of holds its promise: 30 new meters and 30 requests on a warm one, checks and live balances fired at once after each 202', async () => {
  const broken: string[] = []
  for (let n = 0; n < 30; n++) {
    const w = await world(n)
    await answersKeepThePromise(w, n, await send(w, n), broken)
  }
  const warm = await world(100)
  await answersKeepThePromise(warm, 100, await send(warm, 100), broken)
  for (let i = 0; i < 30; i++) await answersKeepThePromise(warm, 100, await send(warm, 100), broken)
  assert.deepEqual(broken, [], `${broken.length} answers claimed events they did not hold`)
})

test("the usage summary's projected amounts carry the currency's minor units, like the projected invoice beside them (was \"14\" beside \"14.00\")", async () => {
  const w = await world(200)
  await send(w, 200) // 40 x 0.35 = 14.00
  const summary = await eventually(async () => {
    const r = await api.get(`/v1/customers/${w.customerId}/usage-summary`)
    assert.equal(r.status, 200, JSON.stringify(r.body))
    return r.body.invoices[0]?.amount === '14.00' ? r.body : undefined
  }, 'the projected invoice')
  assert.deepEqual(summary.projected_amounts, [{ currency: 'USD', amount: '14.00' }])
})
