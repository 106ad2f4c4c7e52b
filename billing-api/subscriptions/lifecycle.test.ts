// Subscription create rules, update with optimistic locking, list filters and the v2 read,
// against real Postgres through HTTP.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'

const clock = new ManualClock(new Date('2026-11-22T10:30:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const fee = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '20', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }
const usagePrice = (meterId: string) => ({ type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '0.5', meter_id: meterId, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' })

async function events(tenantId: string, name: string): Promise<any[]> {
  return p.ctx.orm.em.fork().getConnection().execute(
    `SELECT entity_id, payload FROM system_events_outbox WHERE tenant_id = ? AND event_name = ? ORDER BY created_at, id`, [tenantId, name],
  )
}

async function setup(prices?: (meterId: string) => object[]) {
  const t = await p.newTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: prices ? prices(meter.id) : [fee, usagePrice(meter.id)] }))
  return { t, customer, meter, plan, base: { customer_id: customer.id, plan_id: plan.id, currency: 'EUR' } }
}

test('create stores the lifecycle fields, takes the plan price sequence and publishes subscription.created', async () => {
  const { t, base, plan } = await setup()
  const sub = await created(t.api.post('/v1/subscriptions', {
    ...base, billing_anchor: '2026-11-01T00:00:00Z', collection_method: 'send_invoice', payment_behavior: 'allow_incomplete',
    auto_invoice_threshold: '100.50', commitment_amount: '500', overage_factor: '1.5', enable_true_up: true,
    metadata: { crm: 'x-1' }, lookup_key: 'acme-pro',
  }))
  assert.equal(sub.subscription_status, 'ACTIVE')
  assert.equal(sub.subscription_type, 'STANDALONE')
  assert.equal(sub.billing_anchor, '2026-11-01T00:00:00.000Z')
  assert.equal(sub.current_period_start, '2026-11-22T10:30:00.000Z')
  assert.equal(sub.current_period_end, '2026-12-01T00:00:00.000Z', 'the anchor period that contains the start')
  assert.equal(sub.collection_method, 'send_invoice')
  assert.equal(sub.payment_behavior, 'allow_incomplete')
  assert.equal(sub.auto_invoice_threshold, '100.50')
  assert.equal(sub.commitment_amount, '500')
  assert.equal(sub.overage_factor, '1.5')
  assert.equal(sub.enable_true_up, true)
  assert.equal(sub.lookup_key, 'acme-pro')
  assert.equal(sub.synced_price_sequence, 2, 'the plan has two prices')
  assert.equal(sub.trial_start, null)
  const read = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.deepEqual(read.metadata, { crm: 'x-1' })
  assert.equal(read.auto_invoice_threshold, '100.50')
  const defaults = await created(t.api.post('/v1/subscriptions', base))
  assert.equal(defaults.collection_method, 'charge_automatically')
  assert.equal(defaults.payment_behavior, 'default_active')
  assert.equal(defaults.auto_invoice_threshold, null)
  assert.equal(defaults.enable_true_up, false)
  const ev = await events(t.tenantId, 'subscription.created')
  assert.deepEqual(ev.map((e) => e.entity_id), [sub.id, defaults.id])
  assert.equal(ev[0].payload.plan_id, plan.id)
})

test('trials: explicit days, explicit window, or the plan prices; TRIALING until trial_end', async () => {
  const { t, base } = await setup((m) => [{ ...fee, trial_period_days: 14 }, usagePrice(m)])
  const fromPlan = await created(t.api.post('/v1/subscriptions', base))
  assert.equal(fromPlan.subscription_status, 'TRIALING')
  assert.equal(fromPlan.trial_start, '2026-11-22T10:30:00.000Z')
  assert.equal(fromPlan.trial_end, '2026-12-06T10:30:00.000Z')
  assert.equal(fromPlan.current_period_end, '2026-12-06T10:30:00.000Z', 'the trial is the current period')
  assert.equal(fromPlan.billing_anchor, '2026-12-06T10:30:00.000Z', 'paid billing is anchored at trial_end')
  const none = await created(t.api.post('/v1/subscriptions', { ...base, trial_period_days: 0 }))
  assert.equal(none.subscription_status, 'ACTIVE')
  assert.equal(none.trial_end, null)
  const window = await created(t.api.post('/v1/subscriptions', { ...base, trial_end: '2026-12-01T00:00:00Z' }))
  assert.equal(window.trial_start, '2026-11-22T10:30:00.000Z')
  assert.equal(window.trial_end, '2026-12-01T00:00:00.000Z')
  const startsWithTrial = await created(t.api.post('/v1/subscriptions', { ...base, trial_start: '2026-11-20T00:00:00Z', trial_end: '2026-11-27T00:00:00Z' }))
  assert.deepEqual([startsWithTrial.start_date, startsWithTrial.trial_start], ['2026-11-20T00:00:00.000Z', '2026-11-20T00:00:00.000Z'])
})

test('create refusals (spec Errors 5, 6, 7, trial disagreement): 400 validation_error and nothing written', async () => {
  const { t, base, customer } = await setup()
  const before = { subs: await countRows(p, 'subscriptions', t.tenantId), events: await countRows(p, 'system_events_outbox', t.tenantId) }
  const refused = async (body: object, message: RegExp) => {
    assertError(await t.api.post('/v1/subscriptions', { ...base, ...body }), 400, 'validation_error', message)
  }
  await refused({ trial_period_days: 7, trial_end: '2026-12-01T00:00:00Z' }, /trial_period_days cannot be combined/)
  await refused({ trial_period_days: 7, trial_start: '2026-11-22T10:30:00Z' }, /trial_period_days cannot be combined/)
  await refused({ trial_period_days: -1 }, /trial_period_days/)
  await refused({ trial_end: '2026-11-01T00:00:00Z' }, /trial_end must be after trial_start/)
  await refused({ trial_start: '2026-11-25T00:00:00Z' }, /trial_start needs trial_end/)
  await refused({ start_date: '2026-11-22T10:30:00Z', trial_start: '2026-11-25T00:00:00Z', trial_end: '2026-12-01T00:00:00Z' }, /trial_start must equal start_date/)
  await refused({ billing_cycle: 'calendar', billing_anchor: '2026-11-01T00:00:00Z' }, /billing_anchor is only accepted with billing_cycle anniversary/)
  await refused({ billing_anchor: '2026-11-23T00:00:00Z' }, /billing_anchor must not be after start_date/)
  await refused({ auto_invoice_threshold: '-1' }, /auto_invoice_threshold must be 0 or more/)
  await refused({ auto_invoice_threshold: 10 }, /auto_invoice_threshold/)
  await refused({ collection_method: 'manual' }, /collection_method/)
  // fixed-only plan: no usage price, so no threshold
  const fixedOnly = await created(t.api.post('/v1/plans', { name: 'Flat', prices: [fee] }))
  await refused({ plan_id: fixedOnly.id, auto_invoice_threshold: '5' }, /usage-based plan/)
  // recurring fixed prices that disagree on the trial and no trial_period_days
  const disagree = await created(t.api.post('/v1/plans', { name: 'Mixed', prices: [{ ...fee, trial_period_days: 7 }, { ...fee, amount: '3', trial_period_days: 14 }] }))
  await refused({ plan_id: disagree.id }, /disagree on trial_period_days \(7, 14\)/)
  assert.equal(await countRows(p, 'subscriptions', t.tenantId), before.subs)
  assert.equal(await countRows(p, 'subscription_line_items', t.tenantId), 0)
  assert.equal(await countRows(p, 'system_events_outbox', t.tenantId), before.events)
  // an explicit trial_period_days settles the disagreement
  const settled = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: disagree.id, currency: 'EUR', trial_period_days: 3 }))
  assert.equal(settled.trial_end, '2026-11-25T10:30:00.000Z')
})

test('update persists metadata, threshold and lookup key; a stale version is a 409 version_conflict', async () => {
  const { t, base } = await setup()
  const sub = await created(t.api.post('/v1/subscriptions', base))
  assert.equal(sub.version, 1)
  const res = await t.api.put(`/v1/subscriptions/${sub.id}`, { metadata: { a: '1' }, auto_invoice_threshold: '25', lookup_key: 'k', version: 1 })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body.metadata, { a: '1' })
  assert.equal(res.body.auto_invoice_threshold, '25')
  assert.equal(res.body.lookup_key, 'k')
  assert.equal(res.body.version, 2)
  const read = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.deepEqual([read.metadata, read.auto_invoice_threshold, read.version], [{ a: '1' }, '25', 2])
  assertError(await t.api.put(`/v1/subscriptions/${sub.id}`, { metadata: { b: '2' }, version: 1 }), 409, 'version_conflict', /version 2, not 1/)
  assertError(await t.api.put(`/v1/subscriptions/${sub.id}`, { auto_invoice_threshold: '-0.01' }), 400, 'validation_error', /0 or more/)
  const cleared = await t.api.put(`/v1/subscriptions/${sub.id}`, { auto_invoice_threshold: null })
  assert.equal(cleared.body.auto_invoice_threshold, null)
  assert.equal(cleared.body.version, 3)
  assert.deepEqual(cleared.body.metadata, { a: '1' }, 'absent fields are kept')
  assertError(await t.api.put('/v1/subscriptions/subs_nope', { metadata: {} }), 404, 'not_found')
  const flat = await created(t.api.post('/v1/plans', { name: 'Flat', prices: [fee] }))
  const flatSub = await created(t.api.post('/v1/subscriptions', { ...base, plan_id: flat.id }))
  assertError(await t.api.put(`/v1/subscriptions/${flatSub.id}`, { auto_invoice_threshold: '5' }), 400, 'validation_error', /usage-based plan/)
  assert.equal((await t.api.get(`/v1/subscriptions/${flatSub.id}`)).body.version, 1)
  const updated = await events(t.tenantId, 'subscription.updated')
  assert.equal(updated.length, 2, 'the refused updates published nothing')
  const readAgain = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.deepEqual(readAgain.metadata, { a: '1' })
})

test('list filters by status (several), type, customer and plan, paginated; v2 read reports out-of-sync prices', async () => {
  const { t, base, plan, customer } = await setup()
  const active = await created(t.api.post('/v1/subscriptions', base))
  const draft = await created(t.api.post('/v1/subscriptions', { ...base, draft: true }))
  const trialing = await created(t.api.post('/v1/subscriptions', { ...base, trial_period_days: 5 }))
  assert.equal(draft.subscription_status, 'DRAFT')
  const other = await created(t.api.post('/v1/customers', { external_id: 'd' }))
  const otherSub = await created(t.api.post('/v1/subscriptions', { ...base, customer_id: other.id }))
  const ids = async (q: string) => (await t.api.get(`/v1/subscriptions?${q}`)).body.items.map((s: any) => s.id)
  assert.deepEqual(await ids('subscription_status=DRAFT'), [draft.id])
  assert.deepEqual(await ids('subscription_status=DRAFT&subscription_status=TRIALING'), [draft.id, trialing.id])
  assert.deepEqual(await ids('subscription_status=ACTIVE'), [active.id, otherSub.id])
  assert.deepEqual(await ids(`customer_id=${other.id}`), [otherSub.id])
  assert.deepEqual(await ids(`customer_id=${customer.id}&subscription_status=ACTIVE`), [active.id])
  assert.deepEqual(await ids(`plan_id=${plan.id}&subscription_type=STANDALONE&limit=2&offset=1`), [draft.id, trialing.id])
  assert.deepEqual(await ids('subscription_type=INHERITED'), [])
  const page = (await t.api.get('/v1/subscriptions?limit=1')).body
  assert.deepEqual(page.pagination, { limit: 1, offset: 0, total: 4 })
  assertError(await t.api.get('/v1/subscriptions?subscription_status=PAUSED'), 400, 'validation_error')
  // another tenant sees none of them
  const stranger = await p.newTenant()
  assert.deepEqual((await stranger.api.get('/v1/subscriptions')).body.items, [])
  assertError(await stranger.api.get(`/v2/subscriptions/${active.id}`), 404, 'not_found')

  const v2 = (await t.api.get(`/v2/subscriptions/${active.id}`)).body
  assert.equal(v2.plan_prices_out_of_sync, false)
  assert.equal(v2.id, active.id)
  assert.equal(v2.line_items.length, 2)
  await created(t.api.post('/v1/prices', { ...fee, amount: '30', billing_period: 'ANNUAL', entity_type: 'PLAN', entity_id: plan.id }))
  assert.equal((await t.api.get(`/v2/subscriptions/${active.id}`)).body.plan_prices_out_of_sync, true)
  assert.equal((await t.api.get(`/v1/subscriptions/${active.id}`)).body.plan_prices_out_of_sync, undefined, 'a v2 field only')
  assert.equal((await p.client().get(`/v2/subscriptions/${active.id}`)).status, 401)
})
