// POST /invoices/preview: the subscription's period invoice in the Invoice shape, computed and not
// stored. Seat 30.00 a month in advance with a 10 % coupon: 30.00 - 3.00 = 27.00, no taxes or
// credits before finalization.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
const p = usePlatform({ services: ['billing-api'], clock })

async function subscribed() {
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Team', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '30', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', display_name: 'Seat' }],
  }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: '2026-09-01T00:00:00Z' }))
  const coupon = await created(t.api.post('/v1/coupons', { name: 'Ten', type: 'percentage', percentage_off: '10', duration: 'forever' }))
  await created(t.api.post('/v1/coupon_associations', { coupon_id: coupon.id, subscription_id: sub.id, start_date: '2026-09-01T00:00:00Z' }))
  return { t, customer, sub }
}

test('the current period\'s invoice computed, in the Invoice shape, nothing stored', async () => {
  const { t, customer, sub } = await subscribed()
  const invoices = await countRows(p, 'invoices', t.tenantId)
  const res = await t.api.post('/v1/invoices/preview', { subscription_id: sub.id })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const d = res.body
  assert.deepEqual([d.id, d.invoice_number, d.version, d.created_at, d.tenant_id, d.environment_id], [null, null, null, null, t.tenantId, t.environments.production])
  assert.deepEqual([d.subscription_id, d.customer_id, d.invoice_type, d.invoice_status, d.billing_reason, d.period_start, d.period_end],
    [sub.id, customer.id, 'SUBSCRIPTION', 'DRAFT', 'SUBSCRIPTION_CYCLE', '2026-09-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z'])
  assert.deepEqual([d.subtotal, d.total_discount, d.total_tax, d.total, d.amount_due, d.amount_remaining], ['30.00', '3.00', '0.00', '27.00', '27.00', '27.00'])
  assert.deepEqual(d.line_items.map((l: any) => [l.id, l.display_name, l.amount, l.quantity, l.invoice_level_discount]), [[null, 'Seat', '30.00', '1', '3.00']])
  assert.equal(d.last_computed_at, NOW.toISOString())
  // the same figures as the spec's internal preview
  const internal = (await t.api.post('/v1/invoices/internal/preview', { subscription_id: sub.id })).body
  assert.deepEqual([internal.subtotal, internal.total_discount, internal.total], [d.subtotal, d.total_discount, d.total])
  assert.equal(await countRows(p, 'invoices', t.tenantId), invoices)
})

test('an explicit period; bad input is a 400, another tenant\'s subscription a 404', async () => {
  const { t, sub } = await subscribed()
  const half = await t.api.post('/v1/invoices/preview', { subscription_id: sub.id, period_start: '2026-10-01T00:00:00Z', period_end: '2026-11-01T00:00:00Z' })
  assert.equal(half.status, 200, JSON.stringify(half.body))
  assert.deepEqual([half.body.period_start, half.body.total], ['2026-10-01T00:00:00.000Z', '27.00'])
  assertError(await t.api.post('/v1/invoices/preview', {}), 400, 'validation_error', /subscription_id/)
  assertError(await t.api.post('/v1/invoices/preview', { subscription_id: sub.id, period_start: '2026-10-01T00:00:00Z', period_end: '2026-09-01T00:00:00Z' }), 400, 'validation_error', /period_start/)
  assertError(await t.api.post('/v1/invoices/preview', { subscription_id: sub.id, hide_zero_charges: true }), 400, 'validation_error')
  assertError(await t.api.post('/v1/invoices/preview', { subscription_id: 'subs_nobody' }), 404, 'not_found')
  const other = await p.newTenant()
  assertError(await other.api.post('/v1/invoices/preview', { subscription_id: sub.id }), 404, 'not_found')
})
