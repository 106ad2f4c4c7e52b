// Attaching coupons to subscriptions: each association redeems the coupon once, refusals attach
// and redeem nothing, scoping by tenant.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'

const clock = new ManualClock(new Date('2026-08-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

async function setup() {
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', {
    name: 'P', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }],
  }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: '2026-08-01T00:00:00Z' }))
  return { t, sub }
}

test('an association redeems once, defaults start_date to now, lists and deletes', async () => {
  clock.set(new Date('2026-08-03T10:00:00Z'))
  const { t, sub } = await setup()
  const c = await created(t.api.post('/v1/coupons', { name: 'Ten', type: 'percentage', percentage_off: '10', max_redemptions: 1 }))
  const a = await created(t.api.post('/v1/coupon_associations', { coupon_id: c.id, subscription_id: sub.id }))
  assert.deepEqual([a.coupon_id, a.subscription_id, a.subscription_line_item_id, a.start_date, a.end_date], [c.id, sub.id, null, '2026-08-03T10:00:00.000Z', null])
  assert.equal((await t.api.get(`/v1/coupons/${c.id}`)).body.total_redemptions, 1)
  // max_redemptions reached: refused, nothing attached.
  assertError(await t.api.post('/v1/coupon_associations', { coupon_id: c.id, subscription_id: sub.id }), 400, 'invalid_operation', /max_redemptions/)
  const list = (await t.api.get(`/v1/coupon_associations?subscription_id=${sub.id}`)).body.items
  assert.deepEqual(list.map((x: any) => x.id), [a.id])
  assert.equal((await t.api.delete(`/v1/coupon_associations/${a.id}`)).status, 204)
  assert.deepEqual((await t.api.get(`/v1/coupon_associations?subscription_id=${sub.id}`)).body.items, [])
  assert.equal((await t.api.get(`/v1/coupons/${c.id}`)).body.total_redemptions, 1, 'the redemption stays counted')
})

test('refusals: unknown coupon or subscription, a line item of another subscription, a bad window, another tenant', async () => {
  const { t, sub } = await setup()
  const other = await setup()
  const c = await created(t.api.post('/v1/coupons', { name: 'Five', type: 'fixed', amount_off: '5', currency: 'USD' }))
  assertError(await t.api.post('/v1/coupon_associations', { coupon_id: 'coupon_nope', subscription_id: sub.id }), 400, 'validation_error', /coupon_id/)
  assertError(await t.api.post('/v1/coupon_associations', { coupon_id: c.id, subscription_id: 'subs_nope' }), 400, 'validation_error', /subscription_id/)
  assertError(await t.api.post('/v1/coupon_associations', { coupon_id: c.id, subscription_id: other.sub.id }), 400, 'validation_error', /subscription_id/)
  assertError(await t.api.post('/v1/coupon_associations', { coupon_id: c.id, subscription_id: sub.id, subscription_line_item_id: other.sub.line_items[0].id }), 400, 'validation_error', /subscription_line_item_id/)
  assertError(await t.api.post('/v1/coupon_associations', { coupon_id: c.id, subscription_id: sub.id, start_date: '2026-09-01T00:00:00Z', end_date: '2026-08-01T00:00:00Z' }), 400, 'validation_error', /end_date/)
  assertError(await t.api.post('/v1/coupon_associations', { coupon_id: c.id }), 400, 'validation_error')
  assert.equal(await countRows(p, 'coupon_associations', t.tenantId), 0)
  assert.equal((await t.api.get(`/v1/coupons/${c.id}`)).body.total_redemptions, 0)
})
