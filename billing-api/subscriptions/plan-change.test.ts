// Plan change (modify change_type plan_change): prorated preview, the applied PRORATION invoice
// written once, and refusals that write nothing.
// Old plan Team (EUR, monthly): Seat 30.00 FIXED in ADVANCE (2 seats), Support 10.00 in ARREAR.
// New plan Business: Platform 100.00 FIXED in ADVANCE, Care 20.00 FIXED in ARREAR.
// November has 30 days: a change on Nov 11 leaves 20/30 of the period.
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

async function setup() {
  clock.set(new Date('2026-11-01T00:00:00Z'))
  const t = await p.newTenant()
  const team = await created(t.api.post('/v1/plans', {
    name: 'Team',
    prices: [{ ...eur, amount: '30', invoice_cadence: 'ADVANCE', display_name: 'Seat' }, { ...eur, amount: '10', invoice_cadence: 'ARREAR', display_name: 'Support' }],
  }))
  const business = await created(t.api.post('/v1/plans', {
    name: 'Business',
    prices: [{ ...eur, amount: '100', invoice_cadence: 'ADVANCE', display_name: 'Platform' }, { ...eur, amount: '20', invoice_cadence: 'ARREAR', display_name: 'Care' }],
  }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: team.id, currency: 'EUR', start_date: '2026-11-01T00:00:00Z' }))
  const seat = sub.line_items.find((l: any) => l.display_name === 'Seat')
  await sql(`UPDATE subscription_line_items SET quantity = 2 WHERE id = ?`, [seat.id])
  const preview = (body: object, id = sub.id) => t.api.post(`/v1/subscriptions/${id}/modify/preview`, body)
  const modify = (body: object, id = sub.id) => t.api.post(`/v1/subscriptions/${id}/modify`, body)
  const rows = async () => Object.fromEntries(await Promise.all(
    ['subscriptions', 'subscription_line_items', 'invoices', 'invoice_line_items', 'system_events_outbox'].map(async (table) => [table, await countRows(p, table, t.tenantId)]),
  ))
  return { t, team, business, customer, sub, seat, preview, modify, rows }
}

const lines = (items: any[]) => items.map((l) => [l.display_name, l.quantity, l.amount, l.period_start.slice(5, 10), l.period_end.slice(5, 10)])

test('preview: Team -> Business on Nov 11 credits -40.00, debits 66.67 and writes nothing', async () => {
  const { t, sub, seat, business, team, preview, rows } = await setup()
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const before = await rows()
  const res = await preview({ change_type: 'plan_change', plan_id: business.id })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const b = res.body
  assert.deepEqual(
    [b.change_type, b.old_plan_id, b.new_plan_id, b.effective_date, b.proration_behavior, b.ended_line_item_ids.length],
    ['plan_change', team.id, business.id, '2026-11-11T00:00:00.000Z', 'create_prorations', 2],
  )
  assert.ok(b.ended_line_item_ids.includes(seat.id))
  assert.deepEqual(b.new_line_items.map((l: any) => [l.display_name, l.quantity, l.start_date, l.end_date, l.billing_period]), [
    ['Platform', '1', '2026-11-11T00:00:00.000Z', null, 'MONTHLY'], ['Care', '1', '2026-11-11T00:00:00.000Z', null, 'MONTHLY'],
  ])
  // Seat: 2 * 30.00 = 60.00, 20 of 30 days unused: -(60.00 - 20.00) = -40.00.
  // Platform: 100.00 for the 20 remaining days: 100.00 - 100 * 10/30 (33.333.. -> 33.33) = 66.67.
  // Support and Care are billed in arrear: no proration lines.
  assert.deepEqual(lines(b.invoice_preview.line_items), [
    ['Unused time: Seat', '2', '-40.00', '11-11', '12-01'],
    ['Remaining time: Platform', '1', '66.67', '11-11', '12-01'],
  ])
  assert.deepEqual([b.invoice_preview.billing_reason, b.invoice_preview.subtotal, b.invoice_preview.total], ['PRORATION', '26.67', '26.67'])
  assert.deepEqual(b.invoice_preview.line_items.map((l: any) => l.subscription_line_item_id), [seat.id, null])
  // Nov 16 12:00 leaves 14.5 of 30 days: Seat -(60.00 - 60 * 15.5/30 = 31.00) = -29.00; Platform 100.00 - 51.67 (51.666..) = 48.33
  const later = await preview({ change_type: 'plan_change', plan_id: business.id, effective_date: '2026-11-16T12:00:00Z' })
  assert.deepEqual(lines(later.body.invoice_preview.line_items).map((l) => l[2]), ['-29.00', '48.33'])
  assert.equal(later.body.invoice_preview.total, '19.33')
  assert.deepEqual(await rows(), before)
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.plan_id, team.id)
})

test('apply switches the plan, writes the preview\'s invoice once and the next cycle bills the new plan', async () => {
  const { t, sub, seat, business, preview, modify, rows } = await setup()
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const body = { change_type: 'plan_change', plan_id: business.id }
  const previewed = (await preview(body)).body.invoice_preview
  const res = await modify({ ...body, version: 1 })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const { subscription, invoice } = res.body
  assert.deepEqual([subscription.plan_id, subscription.version], [business.id, 2])
  assert.deepEqual(subscription.line_items.map((l: any) => [l.display_name, l.quantity, l.start_date, l.end_date]).sort(), [
    ['Care', '1', '2026-11-11T00:00:00.000Z', null], ['Platform', '1', '2026-11-11T00:00:00.000Z', null],
  ])
  assert.deepEqual(
    [invoice.billing_reason, invoice.invoice_status, invoice.payment_status, invoice.period_start, invoice.period_end, invoice.total, invoice.amount_due],
    ['PRORATION', 'DRAFT', 'PENDING', '2026-11-11T00:00:00.000Z', '2026-12-01T00:00:00.000Z', '26.67', '26.67'],
  )
  assert.deepEqual(lines(invoice.line_items), lines(previewed.line_items))
  const platform = subscription.line_items.find((l: any) => l.display_name === 'Platform')
  assert.deepEqual(invoice.line_items.map((l: any) => l.subscription_line_item_id), [seat.id, platform.id])
  const archived = await t.api.post('/v1/subscriptions/lineitems/search', { subscription_ids: [sub.id], status: 'archived' })
  assert.deepEqual(archived.body.items.map((l: any) => [l.display_name, l.end_date]).sort(), [
    ['Seat', '2026-11-11T00:00:00.000Z'], ['Support', '2026-11-11T00:00:00.000Z'],
  ])

  // a retry in the same minute, with its now stale version, returns the same invoice and writes nothing
  const written = await rows()
  clock.set(new Date('2026-11-11T00:00:30Z'))
  const again = await modify({ ...body, version: 1 })
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.equal(again.body.invoice.id, invoice.id)
  assert.deepEqual(await rows(), written)
  // later, the same plan is refused
  clock.set(new Date('2026-11-12T00:00:00Z'))
  assertError(await modify(body), 400, 'validation_error', /already on plan/)
  assert.deepEqual(await rows(), written)

  // December cycle: Care in arrear for the 20 of 30 November days it ran (Nov 11..Dec 1): 20.00 * 20/30 = 13.333.. -> 13.33;
  // the old plan's Support (10.00 in arrear, ended Nov 11) for the 10 of 30 days it ran: 10.00 * 10/30 = 3.333.. -> 3.33;
  // Platform 100.00 for December in advance; total 116.66
  clock.set(new Date('2026-12-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })).invoices, 1)
  const [cycle] = await sql(`SELECT id, total::text FROM invoices WHERE subscription_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE'`, [sub.id])
  const cycleLines = await sql(`SELECT display_name, amount::text FROM invoice_line_items WHERE invoice_id = ? ORDER BY display_name`, [cycle.id])
  assert.deepEqual(cycleLines.map((l: any) => [l.display_name, l.amount]), [['Care', '13.33'], ['Platform', '100.00'], ['Support', '3.33']])
  assert.equal(cycle.total, '116.66')
  // the create invoice of Nov 1 billed November's Seat in advance: 1 x 30.00 (setup() sets 2 seats behind the API's back afterwards)
  const invoices = await sql(`SELECT billing_reason, total::text FROM invoices WHERE subscription_id = ? ORDER BY created_at, id`, [sub.id])
  assert.deepEqual(invoices.map((i: any) => [i.billing_reason, i.total]), [['SUBSCRIPTION_CREATE', '30.00'], ['PRORATION', '26.67'], ['SUBSCRIPTION_CYCLE', '116.66']])
})

test('proration_behavior none switches the plan without an invoice', async () => {
  const { sub, business, modify } = await setup()
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const res = await modify({ change_type: 'plan_change', plan_id: business.id, proration_behavior: 'none' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.invoice, null)
  assert.equal(res.body.subscription.plan_id, business.id)
  // no PRORATION invoice; the only invoice is the create invoice of Nov 1: Seat 1 x 30.00 in advance for November
  const invoices = await sql(`SELECT billing_reason, total::text FROM invoices WHERE subscription_id = ? ORDER BY created_at, id`, [sub.id])
  assert.deepEqual(invoices.map((i: any) => [i.billing_reason, i.total]), [['SUBSCRIPTION_CREATE', '30.00']])
})

test('refusals write nothing: other currency, other cadence, advance usage, unknown or same plan, foreign fields', async () => {
  const { t, team, business, customer, seat, preview, modify, rows } = await setup()
  const usd = await created(t.api.post('/v1/plans', { name: 'Dollar', prices: [{ ...eur, currency: 'USD', amount: '50', invoice_cadence: 'ADVANCE' }] }))
  const annual = await created(t.api.post('/v1/plans', { name: 'Annual', prices: [{ ...eur, billing_period: 'ANNUAL', amount: '500', invoice_cadence: 'ADVANCE' }] }))
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const metered = await created(t.api.post('/v1/plans', {
    name: 'Metered', prices: [{ ...eur, type: 'USAGE', amount: '0.5', meter_id: meter.id, invoice_cadence: 'ARREAR' }],
  }))
  // Errors 9 is enforced at price creation; a price made to bill usage in advance behind the API's back is still refused
  await sql(`UPDATE prices SET invoice_cadence = 'ADVANCE' WHERE entity_id = ?`, [metered.id])
  const archivedPlan = await created(t.api.post('/v1/plans', { name: 'Old', prices: [{ ...eur, amount: '5', invoice_cadence: 'ADVANCE' }] }))
  assert.equal((await t.api.delete(`/v1/plans/${archivedPlan.id}`)).status, 200)
  const draft = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: team.id, currency: 'EUR', draft: true }))
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const before = await rows()
  const change = (plan_id: string, extra: object = {}) => ({ change_type: 'plan_change', plan_id, ...extra })
  for (const call of [preview, modify]) {
    assertError(await call(change(usd.id)), 400, 'validation_error', /no prices in EUR/)
    assertError(await call(change(annual.id)), 400, 'validation_error', /billed every 1 MONTHLY/)
    assertError(await call(change(metered.id)), 400, 'validation_error', /billed in arrear/)
    assertError(await call(change(team.id)), 400, 'validation_error', /already on plan/)
    assertError(await call(change('plan_nope')), 400, 'validation_error', /not found/)
    assertError(await call(change(archivedPlan.id)), 400, 'validation_error', /archived/)
    assertError(await call({ change_type: 'plan_change' }), 400, 'validation_error', /plan_id is required/)
    assertError(await call(change(business.id, { line_item_id: seat.id })), 400, 'validation_error', /line_item_id is not accepted/)
    assertError(await call(change(business.id, { quantity: '2' })), 400, 'validation_error', /quantity is not accepted/)
    assertError(await call(change(business.id, { effective_date: '2026-12-01T00:00:00Z' })), 400, 'validation_error', /within the current period/)
    assertError(await call(change(business.id, { version: 5 })), 409, 'version_conflict')
    assertError(await call(change(business.id), draft.id), 400, 'invalid_operation', /DRAFT/)
    assertError(await call(change(business.id), 'subs_nope'), 404, 'not_found')
  }
  assert.deepEqual(await rows(), before)
})
