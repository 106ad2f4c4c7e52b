// Add-on attach and detach (modify change types addon_attach / addon_detach): prorated debits
// and credits on the add-on's own cadence, the PRORATION invoice written once, refusals that
// write nothing.
// Subscription on Team (EUR, monthly from Nov 1 2026): Seat 30.00 in ADVANCE, Support 10.00 in ARREAR.
// Add-ons: Priority 15.00 monthly in ADVANCE (and a USD price the EUR subscription ignores);
// Archive 120.00 ANNUAL in ADVANCE, whose period on this subscription is [2026-11-01, 2027-11-01): 365 days.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform, sqlOn } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { windowAmount } from '../periods/proration-window.js'

test('pure: a window of a period is its second-exact share, rounded once half-up', () => {
  const nov = { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') }
  // 30.00 * 10/30 = 10.00
  assert.equal(windowAmount('30.00', nov, new Date('2026-11-11T00:00:00Z'), new Date('2026-11-21T00:00:00Z'), 'EUR'), '10.00')
  // 0.05 * 10/30 = 0.01666.. -> 0.02
  assert.equal(windowAmount('0.05', nov, new Date('2026-11-01T00:00:00Z'), new Date('2026-11-11T00:00:00Z'), 'EUR'), '0.02')
  // up to the period end: 10.00 - 10 * 10/30 (3.33) = 6.67
  assert.equal(windowAmount('10', nov, new Date('2026-11-11T00:00:00Z'), nov.end, 'EUR'), '6.67')
  // 365-day year, 355 days left: 120.00 - 3.29 = 116.71
  const year = { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2027-11-01T00:00:00Z') }
  assert.equal(windowAmount('120', year, new Date('2026-11-11T00:00:00Z'), year.end, 'EUR'), '116.71')
})

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
  const priority = await created(t.api.post('/v1/addons', {
    name: 'Priority', lookup_key: 'priority',
    prices: [{ ...eur, amount: '15', invoice_cadence: 'ADVANCE' }, { ...eur, currency: 'USD', amount: '17', invoice_cadence: 'ADVANCE' }],
  }))
  const archive = await created(t.api.post('/v1/addons', {
    name: 'Archive', lookup_key: 'archive', prices: [{ ...eur, billing_period: 'ANNUAL', amount: '120', invoice_cadence: 'ADVANCE', display_name: 'Archive yearly' }],
  }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: team.id, currency: 'EUR', start_date: '2026-11-01T00:00:00Z' }))
  const preview = (body: object, id = sub.id) => t.api.post(`/v1/subscriptions/${id}/modify/preview`, body)
  const modify = (body: object, id = sub.id) => t.api.post(`/v1/subscriptions/${id}/modify`, body)
  const rows = async () => Object.fromEntries(await Promise.all(
    ['subscriptions', 'subscription_line_items', 'addon_associations', 'invoices', 'invoice_line_items', 'system_events_outbox']
      .map(async (table) => [table, await countRows(p, table, t.tenantId)]),
  ))
  return { t, team, priority, archive, customer, sub, preview, modify, rows }
}

const lines = (items: any[]) => items.map((l) => [l.display_name, l.quantity, l.amount, l.period_start.slice(0, 10), l.period_end.slice(0, 10)])

test('attach: 2 x Priority on Nov 11 debits 20.00; the annual Archive debits 116.71 to its own period end; written once', async () => {
  const { t, sub, priority, archive, preview, modify, rows } = await setup()
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const before = await rows()
  const res = await preview({ change_type: 'addon_attach', addon_id: priority.id, quantity: '2' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body.new_line_items.map((l: any) => [l.display_name, l.quantity, l.billing_period, l.end_date]), [['Priority', '2', 'MONTHLY', null]])
  // 2 * 15.00 = 30.00 for the 20 remaining of 30 days: 30.00 - 10.00 = 20.00
  assert.deepEqual(lines(res.body.invoice_preview.line_items), [['Remaining time: Priority', '2', '20.00', '2026-11-11', '2026-12-01']])
  assert.equal(res.body.invoice_preview.total, '20.00')
  // 120.00 for the 355 remaining of 365 days: 120.00 - 120 * 10/365 (3.2876.. -> 3.29) = 116.71
  const yearly = await preview({ change_type: 'addon_attach', addon_id: archive.id })
  assert.deepEqual(yearly.body.new_line_items.map((l: any) => [l.display_name, l.billing_period]), [['Archive yearly', 'ANNUAL']])
  assert.deepEqual(lines(yearly.body.invoice_preview.line_items), [['Remaining time: Archive yearly', '1', '116.71', '2026-11-11', '2027-11-01']])
  assert.deepEqual(await rows(), before)

  const applied = await modify({ change_type: 'addon_attach', addon_id: priority.id, quantity: '2', version: 1 })
  assert.equal(applied.status, 200, JSON.stringify(applied.body))
  const { subscription, invoice } = applied.body
  const [assoc] = await sql(`SELECT id, addon_id, addon_status, start_date, end_date FROM addon_associations WHERE subscription_id = ?`, [sub.id])
  assert.deepEqual([assoc.addon_id, assoc.addon_status, new Date(assoc.start_date).toISOString(), assoc.end_date], [priority.id, 'active', '2026-11-11T00:00:00.000Z', null])
  const added = subscription.line_items.find((l: any) => l.addon_association_id === assoc.id)
  assert.deepEqual([added.display_name, added.quantity, added.start_date, added.end_date, subscription.version], ['Priority', '2', '2026-11-11T00:00:00.000Z', null, 2])
  assert.deepEqual(subscription.line_items.filter((l: any) => l.addon_association_id === null).map((l: any) => l.display_name).sort(), ['Seat', 'Support'])
  assert.deepEqual([invoice.billing_reason, invoice.invoice_status, invoice.total, invoice.amount_due], ['PRORATION', 'DRAFT', '20.00', '20.00'])
  assert.deepEqual(lines(invoice.line_items), lines(res.body.invoice_preview.line_items))
  assert.deepEqual(invoice.line_items.map((l: any) => l.subscription_line_item_id), [added.id])

  // a retry in the same minute returns the same invoice; later, attaching it again is refused
  const written = await rows()
  clock.set(new Date('2026-11-11T00:00:45Z'))
  const again = await modify({ change_type: 'addon_attach', addon_id: priority.id, quantity: '2', version: 1 })
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.equal(again.body.invoice.id, invoice.id)
  assert.deepEqual(await rows(), written)
  clock.set(new Date('2026-11-12T00:00:00Z'))
  assertError(await modify({ change_type: 'addon_attach', addon_id: priority.id }), 400, 'validation_error', /already attached/)
  assert.deepEqual(await rows(), written)

  // the annual add-on: its line item keeps its own cadence; the debit runs to 2027-11-01
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const annual = await modify({ change_type: 'addon_attach', addon_id: archive.id })
  assert.equal(annual.status, 200, JSON.stringify(annual.body))
  assert.deepEqual(lines(annual.body.invoice.line_items), [['Remaining time: Archive yearly', '1', '116.71', '2026-11-11', '2027-11-01']])
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.line_items.length, 4)
})

test('attach with an end date debits only up to it; detach credits the unused part and ends the attachment', async () => {
  const { sub, priority, archive, preview, modify, rows } = await setup()
  clock.set(new Date('2026-11-11T00:00:00Z'))
  // Priority 2 x 15.00 = 30.00 until Nov 21: 10 of 30 days = 10.00
  const ending = await preview({ change_type: 'addon_attach', addon_id: priority.id, quantity: '2', end_date: '2026-11-21T00:00:00Z' })
  assert.equal(ending.status, 200, JSON.stringify(ending.body))
  assert.deepEqual(ending.body.new_line_items.map((l: any) => l.end_date), ['2026-11-21T00:00:00.000Z'])
  assert.deepEqual(lines(ending.body.invoice_preview.line_items), [['Remaining time: Priority', '2', '10.00', '2026-11-11', '2026-11-21']])

  assert.equal((await modify({ change_type: 'addon_attach', addon_id: priority.id, quantity: '2' })).status, 200)
  assert.equal((await modify({ change_type: 'addon_attach', addon_id: archive.id })).status, 200)
  clock.set(new Date('2026-11-21T00:00:00Z'))
  // Priority: -(30.00 * 10/30) = -10.00 for Nov 21..Dec 1
  const detach = await preview({ change_type: 'addon_detach', addon_id: priority.id })
  assert.equal(detach.status, 200, JSON.stringify(detach.body))
  assert.deepEqual(lines(detach.body.invoice_preview.line_items), [['Unused time: Priority', '2', '-10.00', '2026-11-21', '2026-12-01']])
  const res = await modify({ change_type: 'addon_detach', addon_id: priority.id })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual([res.body.invoice.total, res.body.invoice.amount_due, res.body.invoice.payment_status], ['-10.00', '0.00', 'SUCCEEDED'])
  assert.deepEqual(res.body.subscription.line_items.map((l: any) => l.display_name).sort(), ['Archive yearly', 'Seat', 'Support'])
  const assocs = await sql(`SELECT addon_id, addon_status, end_date, cancelled_at FROM addon_associations WHERE subscription_id = ? ORDER BY created_at`, [sub.id])
  assert.deepEqual(assocs.map((a: any) => [a.addon_id, a.addon_status, a.end_date ? new Date(a.end_date).toISOString() : null]), [
    [priority.id, 'cancelled', '2026-11-21T00:00:00.000Z'], [archive.id, 'active', null],
  ])
  const [ended] = await sql(`SELECT status, end_date FROM subscription_line_items WHERE subscription_id = ? AND display_name = 'Priority'`, [sub.id])
  assert.deepEqual([ended.status, new Date(ended.end_date).toISOString()], ['archived', '2026-11-21T00:00:00.000Z'])
  // a retry in the same minute is a no-op returning the same invoice
  const written = await rows()
  const again = await modify({ change_type: 'addon_detach', addon_id: priority.id })
  assert.equal(again.status, 200, JSON.stringify(again.body))
  assert.equal(again.body.invoice.id, res.body.invoice.id)
  assert.deepEqual(await rows(), written)
  // Archive: 120.00 for the 345 days Nov 21 2026..Nov 1 2027: -(120.00 - 120 * 20/365 (6.5753.. -> 6.58)) = -113.42
  const yearly = await preview({ change_type: 'addon_detach', addon_id: archive.id })
  assert.deepEqual(lines(yearly.body.invoice_preview.line_items), [['Unused time: Archive yearly', '1', '-113.42', '2026-11-21', '2027-11-01']])
})

test('refusals write nothing', async () => {
  const { t, customer, team, priority, preview, modify, rows } = await setup()
  const usdOnly = await created(t.api.post('/v1/addons', { name: 'Dollar', lookup_key: 'dollar', prices: [{ ...eur, currency: 'USD', amount: '5', invoice_cadence: 'ADVANCE' }] }))
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const metered = await created(t.api.post('/v1/addons', {
    name: 'Calls', lookup_key: 'calls', prices: [{ ...eur, type: 'USAGE', amount: '0.5', meter_id: meter.id, invoice_cadence: 'ARREAR' }],
  }))
  await sql(`UPDATE prices SET invoice_cadence = 'ADVANCE' WHERE entity_id = ?`, [metered.id])
  const cancelled = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: team.id, currency: 'EUR' }))
  clock.set(new Date('2026-11-11T00:00:00Z'))
  assert.equal((await t.api.post(`/v1/subscriptions/${cancelled.id}/cancel`, { cancellation_type: 'immediate' })).status, 200)
  const before = await rows()
  const attach = (extra: object) => ({ change_type: 'addon_attach', addon_id: priority.id, ...extra })
  for (const call of [preview, modify]) {
    assertError(await call(attach({ addon_id: 'addon_nope' })), 400, 'validation_error', /not found/)
    assertError(await call(attach({ addon_id: usdOnly.id })), 400, 'validation_error', /no recurring prices in EUR/)
    assertError(await call(attach({ addon_id: metered.id })), 400, 'validation_error', /billed in arrear/)
    assertError(await call(attach({ end_date: '2026-11-11T00:00:00Z' })), 400, 'validation_error', /end_date must be after/)
    assertError(await call(attach({ quantity: '0' })), 400, 'validation_error', /greater than 0/)
    assertError(await call(attach({ plan_id: team.id })), 400, 'validation_error', /plan_id is not accepted/)
    assertError(await call({ change_type: 'addon_attach' }), 400, 'validation_error', /addon_id is required/)
    assertError(await call({ change_type: 'addon_detach', addon_id: priority.id }), 400, 'validation_error', /not attached/)
    assertError(await call({ change_type: 'addon_detach', addon_id: priority.id, end_date: '2026-11-20T00:00:00Z' }), 400, 'validation_error', /end_date is not accepted/)
    assertError(await call(attach({}), cancelled.id), 400, 'invalid_operation', /CANCELLED/)
  }
  assert.deepEqual(await rows(), before)
})

test('proration_behavior none attaches and detaches without an invoice', async () => {
  const { sub, priority, modify } = await setup()
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const attached = await modify({ change_type: 'addon_attach', addon_id: priority.id, proration_behavior: 'none' })
  assert.equal(attached.status, 200, JSON.stringify(attached.body))
  assert.equal(attached.body.invoice, null)
  assert.equal(attached.body.subscription.line_items.filter((l: any) => l.addon_association_id !== null).length, 1)
  clock.set(new Date('2026-11-20T00:00:00Z'))
  const detached = await modify({ change_type: 'addon_detach', addon_id: priority.id, proration_behavior: 'none' })
  assert.equal(detached.status, 200, JSON.stringify(detached.body))
  assert.equal(detached.body.invoice, null)
  assert.equal(detached.body.subscription.line_items.filter((l: any) => l.addon_association_id !== null).length, 0)
  // no PRORATION invoice; the only invoice is the create invoice of Nov 1: Seat 30.00 in advance for November
  const invoices = await sql(`SELECT billing_reason, subtotal::text FROM invoices WHERE subscription_id = ? ORDER BY created_at, id`, [sub.id])
  assert.deepEqual(invoices.map((i: any) => [i.billing_reason, i.subtotal]), [['SUBSCRIPTION_CREATE', '30.00']])
})
