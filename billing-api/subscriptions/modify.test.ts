// Quantity changes (spec: POST /subscriptions/{id}/modify/preview and modify): the prorated
// preview writes nothing, the apply writes exactly the preview's PRORATION invoice, once.
// Plan (EUR, monthly): Seat 30.00 FIXED in ADVANCE, Support 10.00 FIXED in ARREAR. November
// has 30 days, so day 10 leaves 20/30 of the period.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform, sqlOn } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { billDueSubscriptions } from '../billing/bill-due.js'

const clock = new ManualClock(new Date('2026-11-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const sql = sqlOn(p)
const eur = { currency: 'EUR', billing_period: 'MONTHLY', type: 'FIXED', billing_model: 'FLAT_FEE' }

const lines = (items: any[]) => items.map((l) => [l.display_name, l.quantity, l.amount, l.period_start.slice(5, 10), l.period_end.slice(5, 10)])

async function setup(start = '2026-11-01T00:00:00Z') {
  clock.set(new Date(start))
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Team',
    prices: [
      { ...eur, amount: '30', invoice_cadence: 'ADVANCE', display_name: 'Seat' },
      { ...eur, amount: '10', invoice_cadence: 'ARREAR', display_name: 'Support' },
    ],
  }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'EUR', start_date: start }))
  const line = (s: any, name: string) => s.line_items.find((l: any) => l.display_name === name)
  // two seats from the start: the subscription API takes no quantities, so set it and recompute the
  // DRAFT SUBSCRIPTION_CREATE invoice (first period's Seat in advance) to bill 2 x 30.00 = 60.00
  await sql(`UPDATE subscription_line_items SET quantity = 2 WHERE id = ?`, [line(sub, 'Seat').id])
  const [createInvoice] = await sql(`SELECT id FROM invoices WHERE subscription_id = ? AND billing_reason = 'SUBSCRIPTION_CREATE'`, [sub.id])
  const recomputed = await t.api.post(`/v1/invoices/${createInvoice.id}/compute?sync=true`, {})
  assert.equal(recomputed.status, 200, JSON.stringify(recomputed.body))
  const periodEnd = new Date(start)
  periodEnd.setUTCMonth(periodEnd.getUTCMonth() + 1)
  assert.deepEqual([recomputed.body.total, lines(recomputed.body.line_items)], ['60.00', [['Seat', '2', '60.00', start.slice(5, 10), periodEnd.toISOString().slice(5, 10)]]])
  const preview = (body: object, id = sub.id) => t.api.post(`/v1/subscriptions/${id}/modify/preview`, body)
  const modify = (body: object, id = sub.id) => t.api.post(`/v1/subscriptions/${id}/modify`, body)
  const rows = async () => Object.fromEntries(await Promise.all(
    ['subscription_line_items', 'invoices', 'invoice_line_items', 'system_events_outbox'].map(async (table) => [table, await countRows(p, table, t.tenantId)]),
  ))
  return { t, plan, customer, sub, seat: line(sub, 'Seat'), support: line(sub, 'Support'), line, preview, modify, rows }
}

test('preview: 2 -> 5 seats on day 10 credits -40.00, charges 100.00, nets 60.00 and writes nothing', async () => {
  const { t, sub, seat, preview, rows } = await setup()
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const before = await rows()
  const res = await preview({ change_type: 'quantity_change', line_item_id: seat.id, quantity: '5' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const b = res.body
  assert.deepEqual(
    [b.subscription_id, b.line_item_id, b.price_id, b.old_quantity, b.new_quantity, b.effective_date, b.proration_behavior],
    [sub.id, seat.id, seat.price_id, '2', '5', '2026-11-11T00:00:00.000Z', 'create_prorations'],
  )
  // old: 2 * 30.00 = 60.00, 20 of 30 days unused: -40.00; new: 5 * 30.00 = 150.00 * 20/30 = 100.00
  assert.deepEqual(
    [b.invoice_preview.billing_reason, b.invoice_preview.period_start, b.invoice_preview.period_end, b.invoice_preview.subtotal, b.invoice_preview.total],
    ['PRORATION', '2026-11-11T00:00:00.000Z', '2026-12-01T00:00:00.000Z', '60.00', '60.00'],
  )
  assert.deepEqual(lines(b.invoice_preview.line_items), [
    ['Unused time: Seat', '2', '-40.00', '11-11', '12-01'],
    ['Remaining time: Seat', '5', '100.00', '11-11', '12-01'],
  ])
  // an explicit effective_date, second-exact: Nov 16 12:00 leaves 14.5/30; 60 * 14.5/30 = 29.00, 150 * 14.5/30 = 72.50
  const later = await preview({ change_type: 'quantity_change', line_item_id: seat.id, quantity: '5', effective_date: '2026-11-16T12:00:00Z' })
  assert.deepEqual(lines(later.body.invoice_preview.line_items).map((l) => l[2]), ['-29.00', '72.50'])
  assert.equal(later.body.invoice_preview.total, '43.50')
  assert.deepEqual(await rows(), before)
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.version, 1)
})

test('apply writes the preview\'s invoice once, replaces the line item and the next cycle bills the new quantity', async () => {
  const { t, sub, seat, preview, modify, rows } = await setup()
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const body = { change_type: 'quantity_change', line_item_id: seat.id, quantity: '5' }
  const previewed = (await preview(body)).body.invoice_preview
  const res = await modify({ ...body, version: 1 })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const { subscription, invoice } = res.body
  assert.equal(subscription.version, 2)
  const newSeat = subscription.line_items.find((l: any) => l.display_name === 'Seat')
  assert.notEqual(newSeat.id, seat.id)
  assert.deepEqual([newSeat.price_id, newSeat.quantity, newSeat.start_date, newSeat.end_date], [seat.price_id, '5', '2026-11-11T00:00:00.000Z', null])
  assert.deepEqual(
    [invoice.billing_reason, invoice.invoice_status, invoice.payment_status, invoice.period_start, invoice.period_end, invoice.subtotal, invoice.total, invoice.amount_due],
    ['PRORATION', 'DRAFT', 'PENDING', '2026-11-11T00:00:00.000Z', '2026-12-01T00:00:00.000Z', '60.00', '60.00', '60.00'],
  )
  assert.deepEqual(lines(invoice.line_items), lines(previewed.line_items))
  assert.deepEqual(invoice.line_items.map((l: any) => l.subscription_line_item_id), [seat.id, newSeat.id])
  assert.deepEqual(previewed.line_items.map((l: any) => l.subscription_line_item_id), [seat.id, null])
  // the old line item ended at the effective date and left the current ones
  const archived = await t.api.post('/v1/subscriptions/lineitems/search', { subscription_ids: [sub.id], status: 'archived' })
  assert.deepEqual(archived.body.items.map((l: any) => [l.id, l.quantity, l.end_date]), [[seat.id, '2', '2026-11-11T00:00:00.000Z']])
  const events = await sql(`SELECT event_name FROM system_events_outbox WHERE tenant_id = ? AND entity_id IN (?, ?) ORDER BY created_at, id`, [t.tenantId, sub.id, invoice.id])
  assert.deepEqual(events.map((e: any) => e.event_name).sort(), ['invoice.drafted', 'subscription.created', 'subscription.updated'])

  // a repeat in the same minute (a retried request, even with its now stale version) returns the same invoice and writes nothing
  const written = await rows()
  clock.set(new Date('2026-11-11T00:00:40Z'))
  const again = await modify({ ...body, version: 1 })
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.equal(again.body.invoice.id, invoice.id)
  assert.deepEqual(again.body.subscription.line_items.map((l: any) => l.id), subscription.line_items.map((l: any) => l.id))
  assert.deepEqual(await rows(), written)
  // another change on a stale version is a conflict
  assertError(await modify({ change_type: 'quantity_change', line_item_id: newSeat.id, quantity: '6', version: 1 }), 409, 'version_conflict')
  assert.deepEqual(await rows(), written)

  // 5 -> 3 seats on day 20: -(150.00 * 10/30) = -50.00, 3 * 30.00 * 10/30 = 30.00, net -20.00: nothing due
  clock.set(new Date('2026-11-21T00:00:00Z'))
  const down = await modify({ change_type: 'quantity_change', line_item_id: newSeat.id, quantity: '3', version: 2 })
  assert.equal(down.status, 200, JSON.stringify(down.body))
  const inv2 = down.body.invoice
  assert.deepEqual([inv2.total, inv2.amount_due, inv2.payment_status, inv2.period_start], ['-20.00', '0.00', 'SUCCEEDED', '2026-11-21T00:00:00.000Z'])
  assert.deepEqual(lines(inv2.line_items), [['Unused time: Seat', '5', '-50.00', '11-21', '12-01'], ['Remaining time: Seat', '3', '30.00', '11-21', '12-01']])

  // December's cycle invoice: Support 10.00 for November in arrear + 3 seats * 30.00 for December in advance; the replaced lines bill nothing
  clock.set(new Date('2026-12-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })).invoices, 1)
  const [cycle] = await sql(`SELECT id, total::text FROM invoices WHERE subscription_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE'`, [sub.id])
  const cycleLines = await sql(`SELECT display_name, quantity::text, amount::text FROM invoice_line_items WHERE invoice_id = ? ORDER BY display_name`, [cycle.id])
  assert.deepEqual(cycleLines.map((l: any) => [l.display_name, l.quantity, l.amount]), [['Seat', '3', '90.00'], ['Support', '1', '10.00']])
  assert.equal(cycle.total, '100.00')
})

test('ARREAR prices and proration_behavior none change the quantity without an invoice', async () => {
  const { sub, seat, support, preview, modify } = await setup()
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const arrear = await preview({ change_type: 'quantity_change', line_item_id: support.id, quantity: '4' })
  assert.equal(arrear.status, 200, JSON.stringify(arrear.body))
  assert.deepEqual([arrear.body.old_quantity, arrear.body.new_quantity, arrear.body.invoice_preview.total, arrear.body.invoice_preview.line_items], ['1', '4', '0.00', []])
  const applied = await modify({ change_type: 'quantity_change', line_item_id: support.id, quantity: '4' })
  assert.equal(applied.status, 200, JSON.stringify(applied.body))
  assert.equal(applied.body.invoice, null)
  assert.deepEqual(applied.body.subscription.line_items.map((l: any) => [l.display_name, l.quantity]).sort(), [['Seat', '2'], ['Support', '4']])
  const none = await modify({ change_type: 'quantity_change', line_item_id: seat.id, quantity: '7', proration_behavior: 'none' })
  assert.equal(none.status, 200, JSON.stringify(none.body))
  assert.equal(none.body.invoice, null)
  // the only invoice is still the SUBSCRIPTION_CREATE one written at creation: 2 x 30.00 = 60.00 for Nov 1..Dec 1
  assert.deepEqual(
    (await sql(`SELECT billing_reason, total::text FROM invoices WHERE subscription_id = ?`, [sub.id])).map((r: any) => [r.billing_reason, r.total]),
    [['SUBSCRIPTION_CREATE', '60.00']],
  )
  // a repeat of the no-invoice change is a no-op too
  const again = await modify({ change_type: 'quantity_change', line_item_id: seat.id, quantity: '7', proration_behavior: 'none' })
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.deepEqual(again.body.subscription.line_items.map((l: any) => l.id).sort(), none.body.subscription.line_items.map((l: any) => l.id).sort())
})

test('refusals change nothing: usage prices, unknown line items, dates outside the period, bad quantities, draft and cancelled subscriptions', async () => {
  const { t, plan, customer, sub, seat, preview, modify, rows } = await setup()
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const usagePlan = await created(t.api.post('/v1/plans', {
    name: 'Metered', prices: [{ currency: 'EUR', billing_period: 'MONTHLY', type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.5', meter_id: meter.id, invoice_cadence: 'ARREAR' }],
  }))
  const metered = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: usagePlan.id, currency: 'EUR' }))
  const draft = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'EUR', draft: true }))
  const cancelled = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'EUR' }))
  clock.set(new Date('2026-11-11T00:00:00Z'))
  assert.equal((await t.api.post(`/v1/subscriptions/${cancelled.id}/cancel`, { cancellation_type: 'immediate' })).status, 200)
  const before = await rows()
  const q = (line_item_id: string, extra: object = {}) => ({ change_type: 'quantity_change', line_item_id, quantity: '5', ...extra })
  for (const call of [preview, modify]) {
    assertError(await call(q(metered.line_items[0].id), metered.id), 400, 'validation_error', /USAGE price/)
    assertError(await call(q('subs_line_nope')), 400, 'validation_error', /not a current line item/)
    assertError(await call(q(metered.line_items[0].id)), 400, 'validation_error', /not a current line item/)
    assertError(await call(q(seat.id, { effective_date: '2026-10-31T23:59:59Z' })), 400, 'validation_error', /within the current period/)
    assertError(await call(q(seat.id, { effective_date: '2026-12-01T00:00:00Z' })), 400, 'validation_error', /within the current period/)
    assertError(await call(q(seat.id, { quantity: '0' })), 400, 'validation_error', /greater than 0/)
    assertError(await call(q(seat.id, { quantity: '-1' })), 400, 'validation_error')
    assertError(await call(q(seat.id, { quantity: 5 })), 400, 'validation_error')
    assertError(await call(q(seat.id, { quantity: '2.0' })), 400, 'validation_error', /already has quantity/)
    assertError(await call(q(seat.id, { change_type: 'add_coupon' })), 400, 'validation_error')
    assertError(await call(q(seat.id, { proration_behavior: 'always_invoice' })), 400, 'validation_error')
    assertError(await call(q(seat.id, { version: 3 })), 409, 'version_conflict')
    assertError(await call(q(draft.line_items[0].id), draft.id), 400, 'invalid_operation', /DRAFT/)
    assertError(await call(q(cancelled.line_items[0].id), cancelled.id), 400, 'invalid_operation', /CANCELLED/)
    assertError(await call(q(seat.id), 'subs_nope'), 404, 'not_found')
  }
  // another tenant cannot reach this subscription
  const other = await p.newTenant()
  assertError(await other.api.post(`/v1/subscriptions/${sub.id}/modify`, q(seat.id)), 404, 'not_found')
  assert.deepEqual(await rows(), before)
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.version, 1)
})

test('a cancellation after a quantity change credits what the change billed, not the replaced line item', async () => {
  const { t, sub, seat } = await setup('2026-10-01T00:00:00Z')
  // November's cycle invoice bills 2 seats in advance: 60.00 for Nov 1..Dec 1 (and Support 10.00 for October)
  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })).invoices, 1)
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const changed = await t.api.post(`/v1/subscriptions/${sub.id}/modify`, { change_type: 'quantity_change', line_item_id: seat.id, quantity: '5' })
  assert.equal(changed.body.invoice.total, '60.00', JSON.stringify(changed.body))
  clock.set(new Date('2026-11-21T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  // Final invoice for Nov 1..21: Support 10.00 * 20/30 = 6.67; the 100.00 debited for Nov 11..Dec 1 is
  // used for 10 of its 20 days: credit -(100.00 - 50.00) = -50.00; the replaced 2 seats were credited by the change.
  const [final] = await sql(`SELECT id, total::text FROM invoices WHERE subscription_id = ? AND billing_reason = 'PRORATION' AND period_end = '2026-11-21T00:00:00Z'`, [sub.id])
  const finalLines = await sql(`SELECT display_name, quantity::text, amount::text FROM invoice_line_items WHERE invoice_id = ? ORDER BY amount DESC`, [final.id])
  assert.deepEqual(finalLines.map((l: any) => [l.display_name, l.quantity, l.amount]), [['Support', '1', '6.67'], ['Unused time: Seat', '5', '-50.00']])
  assert.equal(final.total, '-43.33')
})

test('add_line_item debits the rest of the period, remove_line_item credits it; both idempotent, misfits refused', async () => {
  const { t, plan, sub, seat, support, preview, modify, rows } = await setup()
  // a plan price published after the subscription took its prices, and an add-on
  const storage = await created(t.api.post('/v1/prices', { ...eur, amount: '15', invoice_cadence: 'ADVANCE', display_name: 'Storage', entity_type: 'PLAN', entity_id: plan.id }))
  const addon = await created(t.api.post('/v1/addons', { name: 'Priority', lookup_key: 'priority', prices: [{ ...eur, amount: '9', invoice_cadence: 'ADVANCE', display_name: 'Priority' }] }))
  const yearly = await created(t.api.post('/v1/prices', { ...eur, billing_period: 'ANNUAL', amount: '300', invoice_cadence: 'ADVANCE', entity_type: 'PLAN', entity_id: plan.id }))
  const usd = await created(t.api.post('/v1/prices', { ...eur, currency: 'USD', amount: '15', invoice_cadence: 'ADVANCE', entity_type: 'PLAN', entity_id: plan.id }))
  const otherPlan = await created(t.api.post('/v1/plans', { name: 'Other', prices: [{ ...eur, amount: '5', invoice_cadence: 'ADVANCE' }] }))
  clock.set(new Date('2026-11-11T00:00:00Z'))

  const before = await rows()
  for (const call of [preview, modify]) {
    assertError(await call({ change_type: 'add_line_item', price_id: yearly.id }), 400, 'validation_error', /billed every/)
    assertError(await call({ change_type: 'add_line_item', price_id: usd.id }), 400, 'validation_error', /in USD/)
    assertError(await call({ change_type: 'add_line_item', price_id: otherPlan.prices[0].id }), 400, 'validation_error', /belongs neither/)
    assertError(await call({ change_type: 'add_line_item', price_id: 'price_nope' }), 400, 'validation_error', /not found/)
    assertError(await call({ change_type: 'add_line_item', price_id: seat.price_id }), 400, 'validation_error', /already on subscription/)
    assertError(await call({ change_type: 'add_line_item' }), 400, 'validation_error', /price_id is required/)
    assertError(await call({ change_type: 'remove_line_item', line_item_id: 'subs_line_nope' }), 400, 'validation_error', /not a current line item/)
    assertError(await call({ change_type: 'remove_line_item', line_item_id: seat.id, quantity: '1' }), 400, 'validation_error', /not accepted/)
  }
  assert.deepEqual(await rows(), before)

  // 3 x Storage 15.00 = 45.00 for the period, 20 of 30 days left: 30.00
  const body = { change_type: 'add_line_item', price_id: storage.id, quantity: '3' }
  const previewed = await preview(body)
  assert.equal(previewed.status, 200, JSON.stringify(previewed.body))
  assert.deepEqual([previewed.body.line_item_id, previewed.body.old_quantity, previewed.body.new_quantity, previewed.body.invoice_preview.total], [null, null, '3', '30.00'])
  assert.deepEqual(lines(previewed.body.invoice_preview.line_items), [['Remaining time: Storage', '3', '30.00', '11-11', '12-01']])
  const added = await modify(body)
  assert.equal(added.status, 200, JSON.stringify(added.body))
  const storageLine = added.body.subscription.line_items.find((l: any) => l.price_id === storage.id)
  assert.deepEqual([storageLine.quantity, storageLine.start_date, storageLine.display_name], ['3', '2026-11-11T00:00:00.000Z', 'Storage'])
  assert.deepEqual(lines(added.body.invoice.line_items), lines(previewed.body.invoice_preview.line_items))
  assert.equal(added.body.invoice.line_items[0].subscription_line_item_id, storageLine.id)
  const written = await rows()
  clock.set(new Date('2026-11-11T00:00:30Z'))
  const again = await modify(body)
  assert.equal(again.body.invoice.id, added.body.invoice.id, JSON.stringify(again.body))
  assert.deepEqual(await rows(), written)

  // an add-on price, quantity 1 by default: 9.00 * 20/30 = 6.00
  const priority = await modify({ change_type: 'add_line_item', price_id: addon.prices[0].id })
  assert.equal(priority.status, 200, JSON.stringify(priority.body))
  assert.equal(priority.body.invoice.total, '6.00')

  // removing the 2 seats on day 20: -(60.00 * 10/30) = -20.00; removing ARREAR Support: no invoice
  clock.set(new Date('2026-11-21T00:00:00Z'))
  const removed = await modify({ change_type: 'remove_line_item', line_item_id: seat.id })
  assert.equal(removed.status, 200, JSON.stringify(removed.body))
  assert.deepEqual(lines(removed.body.invoice.line_items), [['Unused time: Seat', '2', '-20.00', '11-21', '12-01']])
  assert.deepEqual([removed.body.invoice.total, removed.body.invoice.amount_due], ['-20.00', '0.00'])
  assert.equal((await modify({ change_type: 'remove_line_item', line_item_id: seat.id })).body.invoice.id, removed.body.invoice.id)
  const noSupport = await modify({ change_type: 'remove_line_item', line_item_id: support.id })
  assert.equal(noSupport.body.invoice, null, JSON.stringify(noSupport.body))
  assert.deepEqual(noSupport.body.subscription.line_items.map((l: any) => l.display_name).sort(), ['Priority', 'Storage'])
  assert.equal(noSupport.body.subscription.version, 5)
  // SUBSCRIPTION_CREATE (2 seats x 30.00 = 60.00) + Storage 30.00 + Priority 6.00 + Seat credit -20.00
  assert.deepEqual(
    (await sql(`SELECT billing_reason, total::text FROM invoices WHERE subscription_id = ? ORDER BY created_at, total DESC`, [sub.id])).map((r: any) => [r.billing_reason, r.total]),
    [['SUBSCRIPTION_CREATE', '60.00'], ['PRORATION', '30.00'], ['PRORATION', '6.00'], ['PRORATION', '-20.00']],
  )
})

test("line items one at a time (Flexprice's routes): added and ended as add_line_item and remove_line_item, metadata changed", async () => {
  const { t, plan, sub, seat } = await setup()
  const storage = await created(t.api.post('/v1/prices', { ...eur, amount: '15', invoice_cadence: 'ADVANCE', display_name: 'Storage', entity_type: 'PLAN', entity_id: plan.id }))
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const invoices = async () => (await sql(`SELECT total::text FROM invoices WHERE subscription_id = ? AND billing_reason = 'PRORATION' ORDER BY created_at`, [sub.id])).map((r: any) => r.total)

  // 3 x Storage 15.00, 20 of 30 days left: 30.00, as the modification bills it
  const added = await created(t.api.post(`/v1/subscriptions/${sub.id}/lineitems`, { price_id: storage.id, quantity: 3 }))
  assert.deepEqual([added.subscription_id, added.price_id, added.quantity, added.start_date, added.end_date], [sub.id, storage.id, '3', '2026-11-11T00:00:00.000Z', null])
  assert.deepEqual(await invoices(), ['30.00'])
  assertError(await t.api.post(`/v1/subscriptions/${sub.id}/lineitems`, { price_id: storage.id }), 400, 'validation_error', /already on subscription/)
  assertError(await t.api.post(`/v1/subscriptions/${sub.id}/lineitems`, { price_id: storage.id, quantity: 1.5 }), 400, 'validation_error', /quantity/)
  assertError(await t.api.post('/v1/subscriptions/subs_nope/lineitems', { price_id: storage.id }), 404, 'not_found')

  const tagged = await t.api.put(`/v1/subscriptions/lineitems/${added.id}`, { metadata: { seat: 'extra' } })
  assert.deepEqual([tagged.status, tagged.body.metadata, tagged.body.quantity], [200, { seat: 'extra' }, '3'])
  assertError(await t.api.put(`/v1/subscriptions/lineitems/${added.id}`, { metadata: {}, quantity: 4 }), 400, 'validation_error', /quantity/)

  // ending the 2 seats on day 21: -(60.00 * 10/30) = -20.00
  clock.set(new Date('2026-11-21T00:00:00Z'))
  const ended = await t.api.request('DELETE', `/v1/subscriptions/lineitems/${seat.id}`, {})
  assert.equal(ended.status, 200, JSON.stringify(ended.body))
  assert.deepEqual([ended.body.id, ended.body.end_date, ended.body.status], [seat.id, '2026-11-21T00:00:00.000Z', 'archived'])
  assert.deepEqual(await invoices(), ['30.00', '-20.00'])
  assertError(await t.api.request('DELETE', `/v1/subscriptions/lineitems/${seat.id}`, {}), 404, 'not_found')
  assertError(await t.api.put(`/v1/subscriptions/lineitems/${seat.id}`, { metadata: {} }), 404, 'not_found')
})
