// Flexprice's plan change (POST /subscriptions/{id}/change/preview|execute) and add-on routes
// (POST|DELETE /subscriptions/addon): the plan_change, addon_attach and addon_detach
// modifications under Flexprice's shapes.
// Subscription on Team (EUR, monthly from Nov 1 2026): Seat 30.00 in ADVANCE. Business: 90.00 in
// ADVANCE. Priority add-on: 15.00 monthly in ADVANCE. Changes on Nov 11: 20 of the period's 30 days left.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'

const clock = new ManualClock(new Date('2026-11-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })
const eur = { currency: 'EUR', billing_period: 'MONTHLY', type: 'FIXED', billing_model: 'FLAT_FEE', invoice_cadence: 'ADVANCE' }

async function setup() {
  clock.set(new Date('2026-11-01T00:00:00Z'))
  const t = await p.newTenant()
  const team = await created(t.api.post('/v1/plans', { name: 'Team', lookup_key: 'team', prices: [{ ...eur, amount: '30', display_name: 'Seat' }] }))
  const business = await created(t.api.post('/v1/plans', { name: 'Business', lookup_key: 'business', prices: [{ ...eur, amount: '90', display_name: 'Business seat' }] }))
  const priority = await created(t.api.post('/v1/addons', { name: 'Priority', lookup_key: 'priority', prices: [{ ...eur, amount: '15' }] }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: team.id, currency: 'EUR', start_date: '2026-11-01T00:00:00Z' }))
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const rows = async () => Promise.all(['subscription_line_items', 'addon_associations', 'invoices'].map((table) => countRows(p, table, t.tenantId)))
  return { t, team, business, priority, sub, rows }
}

const change = (planId: string, over: object = {}) => ({
  target_plan_id: planId, proration_behavior: 'create_prorations', billing_cadence: 'RECURRING', billing_cycle: 'anniversary', billing_period: 'MONTHLY', ...over,
})

test('a plan change previewed then executed: the proration worked out (credit 20.00, charge 60.00), the plan moved, the invoice written', async () => {
  const { t, team, business, sub, rows } = await setup()
  const before = await rows()
  const preview = await t.api.post(`/v1/subscriptions/${sub.id}/change/preview`, change(business.id))
  assert.equal(preview.status, 200, JSON.stringify(preview.body))
  const b = preview.body
  assert.deepEqual([b.subscription_id, b.change_type, b.current_plan.id, b.target_plan.id, b.target_plan.name], [sub.id, 'upgrade', team.id, business.id, 'Business'])
  // 30.00 * 20/30 = 20.00 back; 90.00 * 20/30 = 60.00 due
  const d = b.proration_details
  assert.deepEqual([d.credit_amount, d.charge_amount, d.net_amount, d.days_used, d.days_remaining, d.currency], ['20.00', '60.00', '40.00', 10, 20, 'EUR'])
  assert.deepEqual(b.next_invoice_preview.line_items.map((l: any) => [l.description, l.amount, l.is_proration]), [['Unused time: Seat', '-20.00', true], ['Remaining time: Business seat', '60.00', true]])
  assert.deepEqual(await rows(), before, 'a preview writes nothing')

  const done = await t.api.post(`/v1/subscriptions/${sub.id}/change/execute`, change(business.id))
  assert.equal(done.status, 200, JSON.stringify(done.body))
  assert.deepEqual([done.body.old_subscription.plan_id, done.body.new_subscription.plan_id, done.body.is_scheduled], [team.id, business.id, false])
  assert.deepEqual([done.body.invoice.billing_reason, done.body.invoice.total, done.body.proration_applied.net_amount], ['PRORATION', '40.00', '40.00'])
  const after = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.equal(after.plan_id, business.id)
  assert.deepEqual(after.line_items.filter((l: any) => !l.end_date || l.end_date > '2026-11-11').map((l: any) => l.display_name), ['Business seat'])
})

test('a plan change keeps the billing: another period, cycle or a schedule is refused and nothing is written', async () => {
  const { t, business, sub, rows } = await setup()
  const before = await rows()
  const execute = (over: object) => t.api.post(`/v1/subscriptions/${sub.id}/change/execute`, change(business.id, over))
  assertError(await execute({ billing_period: 'ANNUAL' }), 400, 'validation_error', /billing_period must be the subscription's \(MONTHLY\)/)
  assertError(await execute({ billing_cycle: 'calendar' }), 400, 'validation_error', /billing_cycle/)
  assertError(await execute({ change_at: 'end_of_period' }), 400, 'validation_error', /change_at/)
  assertError(await execute({ billing_cadence: 'ONETIME' }), 400, 'validation_error', /billing_cadence/)
  assertError(await execute({ metadata: { a: 'b' } }), 400, 'validation_error', /metadata/)
  assert.deepEqual(await rows(), before)
})

test('an add-on attached and detached by its association: its line item from now, then ended', async () => {
  const { t, priority, sub, rows } = await setup()
  const res = await t.api.post('/v1/subscriptions/addon', { subscription_id: sub.id, addon_id: priority.id })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const assoc = res.body
  assert.deepEqual(
    [assoc.addon_id, assoc.entity_id, assoc.entity_type, assoc.addon_status, assoc.start_date, assoc.end_date],
    [priority.id, sub.id, 'subscription', 'active', '2026-11-11T00:00:00.000Z', null],
  )
  const addonLines = async (status = 'published') =>
    (await t.api.post('/v1/subscriptions/lineitems/search', { subscription_ids: [sub.id], status })).body.items.filter((l: any) => l.addon_association_id === assoc.id)
  assert.deepEqual((await addonLines()).map((l: any) => [l.start_date, l.end_date]), [['2026-11-11T00:00:00.000Z', null]])
  const attached = async () => {
    const list = await t.api.get(`/v1/subscriptions/${sub.id}/addons/associations`)
    assert.equal(list.status, 200, JSON.stringify(list.body))
    assert.equal(list.body.pagination.total, list.body.items.length)
    return list.body.items
  }
  assert.deepEqual(await attached(), [assoc])
  // the same request again (the same minute) is the same attachment, not a second one; later, refused
  const again = await t.api.post('/v1/subscriptions/addon', { subscription_id: sub.id, addon_id: priority.id })
  assert.deepEqual([again.status, again.body.id], [200, assoc.id])
  assert.equal((await addonLines()).length, 1)
  clock.set(new Date('2026-11-12T00:00:00Z'))
  assertError(await t.api.post('/v1/subscriptions/addon', { subscription_id: sub.id, addon_id: priority.id }), 400, 'validation_error', /already attached/)

  clock.set(new Date('2026-11-21T00:00:00Z'))
  const before = await rows()
  assertError(await t.api.request('DELETE', '/v1/subscriptions/addon', JSON.stringify({ addon_association_id: assoc.id, reason: 'x' }), { 'content-type': 'application/json' }), 400, 'validation_error', /reason/)
  assert.deepEqual(await rows(), before)
  const gone = await t.api.request('DELETE', '/v1/subscriptions/addon', JSON.stringify({ addon_association_id: assoc.id }), { 'content-type': 'application/json' })
  assert.deepEqual([gone.status, gone.body], [200, { message: `${assoc.id} detached` }])
  assert.deepEqual((await addonLines()).length, 0)
  assert.deepEqual(await attached(), [], 'a detached add-on is no longer listed')
  assert.deepEqual((await addonLines('archived')).map((l: any) => l.end_date), ['2026-11-21T00:00:00.000Z'], 'its line item ended now')
  // the same request again (the same minute) is answered the same; later, refused
  const repeated = await t.api.request('DELETE', '/v1/subscriptions/addon', JSON.stringify({ addon_association_id: assoc.id }), { 'content-type': 'application/json' })
  assert.deepEqual([repeated.status, repeated.body], [200, { message: `${assoc.id} detached` }])
  clock.set(new Date('2026-11-22T00:00:00Z'))
  assertError(await t.api.request('DELETE', '/v1/subscriptions/addon', JSON.stringify({ addon_association_id: assoc.id }), { 'content-type': 'application/json' }), 400, 'validation_error', /not attached/)
})

test('another tenant\'s key cannot change, attach to or detach from a subscription', async () => {
  const { t, business, priority, sub, rows } = await setup()
  const assoc = await t.api.post('/v1/subscriptions/addon', { subscription_id: sub.id, addon_id: priority.id })
  const before = await rows()
  const other = await p.newTenant()
  assertError(await other.api.post(`/v1/subscriptions/${sub.id}/change/preview`, change(business.id)), 404, 'not_found')
  assertError(await other.api.post(`/v1/subscriptions/${sub.id}/change/execute`, change(business.id)), 404, 'not_found')
  assertError(await other.api.post('/v1/subscriptions/addon', { subscription_id: sub.id, addon_id: priority.id }), 404, 'not_found')
  assertError(await other.api.request('DELETE', '/v1/subscriptions/addon', JSON.stringify({ addon_association_id: assoc.body.id }), { 'content-type': 'application/json' }), 404, 'not_found')
  assertError(await other.api.get(`/v1/subscriptions/${sub.id}/addons/associations`), 404, 'not_found')
  assertError(await t.api.get('/v1/subscriptions/subs_nobody/addons/associations'), 404, 'not_found')
  assert.deepEqual(await rows(), before)
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.plan_id, sub.plan_id)
})
