// Subscription phases: a schedule of line-item sets with their own coupons; each takes over at
// its start (job subscription-phase-start) with the unused-time credit and remaining-time debit
// of advance fees, and the cycle invoice after it bills the phase's prices with its coupons.
// USD, monthly from 2026-09-01: September has 30 days.
// Basic: 30.00 in ADVANCE + Support 10.00 in ARREAR. Phase 1 (Sep 16): Pro 60.00 in ADVANCE.
// Phase 2 (Sep 21): Team 45.00 in ADVANCE with a 10% coupon.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'
import { billDueSubscriptions } from '../billing/bill-due.js'
import { startDuePhases } from './phase-switch.js'

const clock = new ManualClock(new Date('2026-09-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })
const usd = { currency: 'USD', billing_period: 'MONTHLY', type: 'FIXED', billing_model: 'FLAT_FEE' }

async function setup() {
  clock.set(new Date('2026-09-01T00:00:00Z'))
  const t = await p.newTenant()
  const plan = (name: string, prices: object[]) => created(t.api.post('/v1/plans', { name, prices }))
  const basic = await plan('Basic', [{ ...usd, amount: '30', invoice_cadence: 'ADVANCE', display_name: 'Basic' }, { ...usd, amount: '10', invoice_cadence: 'ARREAR', display_name: 'Support' }])
  const pro = await plan('Pro', [{ ...usd, amount: '60', invoice_cadence: 'ADVANCE', display_name: 'Pro' }])
  const team = await plan('Team', [{ ...usd, amount: '45', invoice_cadence: 'ADVANCE', display_name: 'Team' }])
  const eur = await plan('Euro', [{ ...usd, currency: 'EUR', amount: '45', invoice_cadence: 'ADVANCE' }])
  const coupon = await created(t.api.post('/v1/coupons', { name: 'Ten', type: 'percentage', percentage_off: '10', duration: 'forever' }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: basic.id, currency: 'USD', start_date: '2026-09-01T00:00:00Z' }))
  return { t, sub, pro: pro.prices[0], team: team.prices[0], euro: eur.prices[0], coupon }
}

const invoiceLines = (inv: any) => inv.line_items.map((l: any) => [l.display_name, l.amount, l.period_start.slice(5, 10), l.period_end.slice(5, 10)]).sort()

test('phases take over at their starts with prorations; the next cycle bills the last phase with its coupon', async () => {
  const { t, sub, pro, team, coupon } = await setup()
  clock.set(new Date('2026-09-10T00:00:00Z'))
  const p1 = await created(t.api.post(`/v1/subscriptions/${sub.id}/phases`, { start_date: '2026-09-16T00:00:00Z', line_items: [{ price_id: pro.id }] }))
  const p2 = await created(t.api.post(`/v1/subscriptions/${sub.id}/phases`, { start_date: '2026-09-21T00:00:00Z', line_items: [{ price_id: team.id }], coupon_ids: [coupon.id] }))
  const schedule = (await t.api.get(`/v1/subscriptions/${sub.id}/phases`)).body.items
  assert.deepEqual(schedule.map((x: any) => [x.id, x.start_date, x.end_date, x.applied_at]), [
    [p1.id, '2026-09-16T00:00:00.000Z', '2026-09-21T00:00:00.000Z', null],
    [p2.id, '2026-09-21T00:00:00.000Z', null, null],
  ])
  assert.deepEqual(p2.line_items, [{ price_id: team.id, quantity: '1' }])
  // the subscription read carries the schedule (spec: Subscription.phases), v1 and v2
  for (const path of [`/v1/subscriptions/${sub.id}`, `/v2/subscriptions/${sub.id}`]) {
    assert.deepEqual((await t.api.get(path)).body.phases.map((x: any) => [x.id, x.end_date]), [[p1.id, '2026-09-21T00:00:00.000Z'], [p2.id, null]], path)
  }

  // not yet due
  assert.deepEqual(await startDuePhases(p.ctx, { tenantId: t.tenantId }), { started: 0, invoices: 0 })

  clock.set(new Date('2026-09-16T00:00:30Z'))
  assert.deepEqual(await startDuePhases(p.ctx, { tenantId: t.tenantId }), { started: 1, invoices: 1 })
  assert.deepEqual(await startDuePhases(p.ctx, { tenantId: t.tenantId }), { started: 0, invoices: 0 })
  const afterP1 = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.deepEqual(afterP1.line_items.map((l: any) => [l.display_name, l.subscription_phase_id, l.start_date]), [['Pro', p1.id, '2026-09-16T00:00:00.000Z']])
  const invoices = async () => (await t.api.post('/v1/invoices/search', { subscription_id: sub.id, sort: [{ field: 'created_at' }], order: 'asc' })).body.items
  let all = await invoices()
  const first = all.find((i: any) => i.billing_reason === 'PRORATION')
  // Basic 30.00 unused for 15 of 30 days: -(30.00 - 15.00) = -15.00; Pro 60.00 for 15 of 30 days: 30.00.
  // Support is billed in arrear: no proration line.
  assert.deepEqual(invoiceLines(first), [['Remaining time: Pro', '30.00', '09-16', '10-01'], ['Unused time: Basic', '-15.00', '09-16', '10-01']])
  assert.equal(first.total, '15.00')

  clock.set(new Date('2026-09-21T00:00:30Z'))
  assert.deepEqual(await startDuePhases(p.ctx, { tenantId: t.tenantId }), { started: 1, invoices: 1 })
  all = await invoices()
  const second = all.filter((i: any) => i.billing_reason === 'PRORATION').find((i: any) => i.id !== first.id)
  // Pro 60.00 unused for 10 of 30 days: -(60.00 - 40.00) = -20.00; Team 45.00 for 10 of 30 days: 15.00.
  // A proration invoice carries no coupons.
  assert.deepEqual(invoiceLines(second), [['Remaining time: Team', '15.00', '09-21', '10-01'], ['Unused time: Pro', '-20.00', '09-21', '10-01']])
  assert.deepEqual([second.total, second.total_discount], ['-5.00', '0.00'])
  const assoc = (await t.api.get(`/v1/coupon_associations?subscription_id=${sub.id}`)).body.items
  const teamLine = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body.line_items[0]
  assert.equal(teamLine.display_name, 'Team')
  assert.deepEqual(assoc.map((a: any) => [a.coupon_id, a.subscription_phase_id, a.subscription_line_item_id, a.start_date, a.end_date]), [[coupon.id, p2.id, teamLine.id, '2026-09-21T00:00:00.000Z', null]])

  // The cycle at Oct 1: Support (arrear) for the part of September it ran, 10.00 x 15/30 = 5.00;
  // Team 45.00 in advance for October, its phase's 10% off: 4.50. Basic and Pro have ended.
  clock.set(new Date('2026-10-01T00:01:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const cycle = (await invoices()).find((i: any) => i.billing_reason === 'SUBSCRIPTION_CYCLE')
  assert.deepEqual(invoiceLines(cycle), [['Support', '5.00', '09-01', '09-16'], ['Team', '45.00', '10-01', '11-01']])
  assert.deepEqual([cycle.subtotal, cycle.total_discount, cycle.total], ['50.00', '4.50', '45.50'])

  // a started phase stays
  assertError(await t.api.delete(`/v1/subscriptions/${sub.id}/phases/${p1.id}`), 400, 'invalid_operation', /started/)
})

test('refusals write nothing; a phase not started can be deleted and the schedule closes up', async () => {
  const { t, sub, pro, team, euro } = await setup()
  clock.set(new Date('2026-09-10T00:00:00Z'))
  const phases = () => t.api.get(`/v1/subscriptions/${sub.id}/phases`)
  const add = (body: object) => t.api.post(`/v1/subscriptions/${sub.id}/phases`, body)
  assertError(await add({ start_date: '2026-09-09T00:00:00Z', line_items: [{ price_id: pro.id }] }), 400, 'validation_error', /start_date must be in the future/)
  assertError(await add({ start_date: '2026-09-20T00:00:00Z', line_items: [{ price_id: euro.id }] }), 400, 'validation_error', /line_items\[0\]\.price_id: .* is in EUR/)
  assertError(await add({ start_date: '2026-09-20T00:00:00Z', line_items: [{ price_id: 'price_nope' }] }), 400, 'validation_error', /price price_nope not found/)
  assertError(await add({ start_date: '2026-09-20T00:00:00Z', line_items: [{ price_id: pro.id }], coupon_ids: ['coupon_nope'] }), 400, 'validation_error', /coupon coupon_nope not found/)
  assertError(await add({ start_date: '2026-09-20T00:00:00Z', line_items: [] }), 400, 'validation_error')
  assert.equal(await countRows(p, 'subscription_phases', t.tenantId), 0)

  const a = await created(add({ start_date: '2026-09-20T00:00:00Z', line_items: [{ price_id: pro.id }] }))
  const b = await created(add({ start_date: '2026-09-25T00:00:00Z', line_items: [{ price_id: team.id, quantity: '3' }] }))
  assertError(await add({ start_date: '2026-09-25T00:00:00Z', line_items: [{ price_id: pro.id }] }), 400, 'validation_error', /already starts/)
  assert.equal((await t.api.delete(`/v1/subscriptions/${sub.id}/phases/${b.id}`)).status, 204)
  assert.deepEqual((await phases()).body.items.map((x: any) => [x.id, x.end_date]), [[a.id, null]])
  assertError(await t.api.delete(`/v1/subscriptions/${sub.id}/phases/${b.id}`), 404, 'not_found')
})

test('tenancy: another tenant cannot read, add or delete phases of this subscription', async () => {
  const { t, sub, pro } = await setup()
  clock.set(new Date('2026-09-10T00:00:00Z'))
  const phase = await created(t.api.post(`/v1/subscriptions/${sub.id}/phases`, { start_date: '2026-09-20T00:00:00Z', line_items: [{ price_id: pro.id }] }))
  const other = await p.newTenant()
  assertError(await other.api.get(`/v1/subscriptions/${sub.id}/phases`), 404, 'not_found')
  assertError(await other.api.post(`/v1/subscriptions/${sub.id}/phases`, { start_date: '2026-09-22T00:00:00Z', line_items: [{ price_id: pro.id }] }), 404, 'not_found')
  assertError(await other.api.delete(`/v1/subscriptions/${sub.id}/phases/${phase.id}`), 404, 'not_found')
  // the other tenant's job run does not start it
  clock.set(new Date('2026-09-20T00:00:30Z'))
  assert.deepEqual(await startDuePhases(p.ctx, { tenantId: other.tenantId }), { started: 0, invoices: 0 })
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}/phases`)).body.items[0].applied_at, null)
  assert.equal(await countRows(p, 'subscription_phases', t.tenantId), 1)
})

test('a phase starting on a period boundary waits for the cycle invoice, then credits and debits the whole new period', async () => {
  const { t, sub, pro } = await setup()
  clock.set(new Date('2026-09-20T00:00:00Z'))
  const phase = await created(t.api.post(`/v1/subscriptions/${sub.id}/phases`, { start_date: '2026-10-01T00:00:00Z', line_items: [{ price_id: pro.id }] }))
  // the period [Sep 1, Oct 1) is not yet billed: the switch waits for it
  clock.set(new Date('2026-10-01T00:00:30Z'))
  assert.deepEqual(await startDuePhases(p.ctx, { tenantId: t.tenantId }), { started: 0, invoices: 0 })
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  assert.deepEqual(await startDuePhases(p.ctx, { tenantId: t.tenantId }), { started: 1, invoices: 1 })
  const invoices = (await t.api.post('/v1/invoices/search', { subscription_id: sub.id })).body.items
  const cycle = invoices.find((i: any) => i.billing_reason === 'SUBSCRIPTION_CYCLE')
  // September's Support in arrear, October's Basic in advance, as before the phase
  assert.deepEqual(invoiceLines(cycle), [['Basic', '30.00', '10-01', '11-01'], ['Support', '10.00', '09-01', '10-01']])
  // October's Basic fee back in full, October's Pro fee in full: 30.00 more
  const switched = invoices.find((i: any) => i.billing_reason === 'PRORATION')
  assert.deepEqual(invoiceLines(switched), [['Remaining time: Pro', '60.00', '10-01', '11-01'], ['Unused time: Basic', '-30.00', '10-01', '11-01']])
  assert.equal(switched.total, '30.00')
  const line = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body.line_items
  assert.deepEqual(line.map((l: any) => [l.display_name, l.subscription_phase_id, l.start_date]), [['Pro', phase.id, '2026-10-01T00:00:00.000Z']])
})
