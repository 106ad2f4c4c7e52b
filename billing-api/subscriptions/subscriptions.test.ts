// Subscription creation (foundation scope) against real Postgres.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'

const p = usePlatform({ services: ['billing-api'], clock: new ManualClock(new Date('2026-11-22T10:30:00Z')) })

const monthlyFee = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '20', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }

test('anniversary and calendar cycles set the first period; line items follow the plan prices', async () => {
  const t = await p.newTenant()
  const c = await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [monthlyFee, { ...monthlyFee, currency: 'USD' }] }))
  const anniversary = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'eur' }))
  assert.equal(anniversary.subscription_status, 'ACTIVE')
  assert.equal(anniversary.current_period_start, '2026-11-22T10:30:00.000Z')
  assert.equal(anniversary.current_period_end, '2026-12-22T10:30:00.000Z')
  assert.equal(anniversary.line_items.length, 1, 'only the EUR price')
  assert.equal(anniversary.line_items[0].price_id, plan.prices[0].id)
  const calendar = await created(t.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id, currency: 'EUR', billing_cycle: 'calendar' }))
  assert.equal(calendar.billing_anchor, '2026-11-01T00:00:00.000Z')
  assert.equal(calendar.current_period_end, '2026-12-01T00:00:00.000Z')
})

test('refusals: unknown customer, foreign or archived plan, no price in the currency; nothing is written', async () => {
  const t = await p.newTenant()
  const other = await p.newTenant()
  await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [monthlyFee] }))
  const foreignPlan = await created(other.api.post('/v1/plans', { name: 'Theirs', prices: [monthlyFee] }))
  assertError(await t.api.post('/v1/subscriptions', { external_customer_id: 'nobody', plan_id: plan.id, currency: 'EUR' }), 404, 'not_found')
  assertError(await t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: foreignPlan.id, currency: 'EUR' }), 400, 'validation_error', /plan/)
  assertError(await t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'JPY' }), 400, 'validation_error', /no JPY prices/)
  assert.equal((await t.api.delete(`/v1/plans/${plan.id}`)).status, 200)
  assertError(await t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'EUR' }), 400, 'validation_error', /archived/)
  assert.equal(await countRows(p, 'subscriptions', t.tenantId), 0)
  assert.equal(await countRows(p, 'subscription_line_items', t.tenantId), 0)
})

test('a plan read carries its entitlements and credit grants', async () => {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const feature = await created(t.api.post('/v1/features', { name: 'API calls', type: 'metered', meter_id: meter.id }))
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [monthlyFee] }))
  await created(t.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: feature.id, usage_limit: 1000 }))
  const read = (await t.api.get(`/v1/plans/${plan.id}`)).body
  assert.equal(read.entitlements.length, 1)
  assert.equal(read.entitlements[0].feature_id, feature.id)
  assert.equal(read.entitlements[0].usage_limit, 1000)
  assert.deepEqual(read.credit_grants, [])
})

test("Flexprice's forms: subscription_status draft, search by body, the v2 read under /v1, cancel_at_period_end only as it is", async () => {
  const t = await p.newTenant()
  const c = await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [monthlyFee] }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id, currency: 'EUR', billing_cadence: 'RECURRING' }))
  assert.deepEqual(
    [sub.customer, sub.plan, sub.pauses, sub.credit_grants, sub.latest_invoice, sub.line_items[0].price, sub.line_items[0].price_type],
    [null, null, null, null, null, null, null],
  )
  const draft = await created(t.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id, currency: 'EUR', subscription_status: 'draft' }))
  assert.equal(draft.subscription_status, 'DRAFT')
  assertError(await t.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id, currency: 'EUR', subscription_status: 'draft', draft: false }), 400, 'validation_error', /subscription_status/)
  assertError(await t.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id, currency: 'EUR', subscription_status: 'active' }), 400, 'validation_error', /subscription_status/)

  const search = async (body: object) => (await t.api.post('/v1/subscriptions/search', body)).body
  const all = await search({ customer_id: c.id })
  assert.deepEqual([all.items.map((s: any) => s.id), all.pagination.total, all.items[0].line_items], [[sub.id, draft.id], 2, null])
  assert.deepEqual((await search({ subscription_status: ['DRAFT'] })).items.map((s: any) => s.id), [draft.id])
  assertError(await t.api.post('/v1/subscriptions/search', { with_line_items: true }), 400, 'validation_error', /with_line_items/)

  const v2 = (await t.api.get(`/v1/subscriptions/${sub.id}/v2`)).body
  assert.deepEqual(v2, (await t.api.get(`/v2/subscriptions/${sub.id}`)).body)
  assert.equal(v2.plan_prices_out_of_sync, false)

  const same = await t.api.put(`/v1/subscriptions/${sub.id}`, { cancel_at_period_end: false, metadata: { k: 'v' } })
  assert.deepEqual([same.status, same.body.cancel_at_period_end, same.body.metadata], [200, false, { k: 'v' }])
  assertError(await t.api.put(`/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true }), 400, 'validation_error', /cancel_at_period_end: cancel through POST/)
})
