// POST /invoices/{id}/recalculate (Flexprice's name for the synchronous recomputation): a DRAFT
// subscription invoice of 25.00 recomputed after a 10 % coupon was attached (backdated to the
// period) is 22.50, and finalized in the same request unless finalize=false.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { assertError } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'
import { billedInvoices, type Tenant } from '../../test/support/invoices.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
const p = usePlatform({ services: ['billing-api'], clock })

/** A DRAFT invoice of 25.00 (August) whose subscription then gets a 10 % coupon for that period. */
async function draftWithNewCoupon(t: Tenant) {
  clock.set(NOW)
  const { sub, invoiceIds: [id] } = await billedInvoices(p, t)
  const coupon = await created(t.api.post('/v1/coupons', { name: 'Ten', type: 'percentage', percentage_off: '10', duration: 'forever' }))
  await created(t.api.post('/v1/coupon_associations', { coupon_id: coupon.id, subscription_id: sub.id, start_date: '2026-08-01T00:00:00Z' }))
  clock.set(new Date('2026-09-15T11:00:00Z'))
  return id
}

const figures = (inv: any) => [inv.invoice_status, inv.subtotal, inv.total_discount, inv.total, inv.amount_due]

test('finalize=false: the draft recomputed (the coupon applied), still a DRAFT', async () => {
  const t = await p.newTenant()
  const id = await draftWithNewCoupon(t)
  assert.deepEqual(figures((await t.api.get(`/v1/invoices/${id}`)).body), ['DRAFT', '25.00', '0.00', '25.00', '25.00'])
  const res = await t.api.post(`/v1/invoices/${id}/recalculate?finalize=false`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(figures(res.body), ['DRAFT', '25.00', '2.50', '22.50', '22.50'])
  assert.deepEqual([res.body.id, res.body.last_computed_at, res.body.invoice_number], [id, clock.now().toISOString(), null])
  assert.deepEqual((await t.api.get(`/v1/invoices/${id}`)).body, res.body)
})

test('by default the recomputed invoice is finalized in the same request', async () => {
  const t = await p.newTenant()
  const id = await draftWithNewCoupon(t)
  const res = await t.api.post(`/v1/invoices/${id}/recalculate`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(figures(res.body), ['FINALIZED', '25.00', '2.50', '22.50', '22.50'])
  assert.match(res.body.invoice_number, /^INV-\d{6}$/)
  assertError(await t.api.post(`/v1/invoices/${id}/recalculate`), 400, 'invalid_operation', /FINALIZED/)
})

test('refused: one-off invoices, bad query, unknown and other tenants\' invoices; nothing changes', async () => {
  const t = await p.newTenant()
  const id = await draftWithNewCoupon(t)
  const customer = await created(t.api.post('/v1/customers', { external_id: 'one-off' }))
  const oneOff = await created(t.api.post('/v1/invoices', { customer_id: customer.id, invoice_type: 'ONE_OFF', currency: 'USD', line_items: [{ display_name: 'X', amount: '5.00' }] }))
  assertError(await t.api.post(`/v1/invoices/${oneOff.id}/recalculate`), 400, 'invalid_operation', /ONE_OFF/)
  assertError(await t.api.post(`/v1/invoices/${id}/recalculate?finalize=maybe`), 400, 'validation_error')
  assertError(await t.api.post('/v1/invoices/inv_nobody/recalculate'), 404, 'not_found')
  const other = await p.newTenant()
  assertError(await other.api.post(`/v1/invoices/${id}/recalculate`), 404, 'not_found')
  assert.deepEqual(figures((await t.api.get(`/v1/invoices/${id}`)).body), ['DRAFT', '25.00', '0.00', '25.00', '25.00'])
})
