// Multi-cadence cancellation strategies: minimum_period_end / maximum_period_end pick the
// earliest / latest current period end among the line items' cadences, are scheduled like
// scheduled_date and are refused on single-cadence subscriptions.
// Subscription on Team (EUR, monthly from Sun Nov 1 2026: Seat 30.00 ADVANCE, Support 10.00 ARREAR);
// add-ons Archive 120.00 ANNUAL (period to Nov 1 2027) and Standup 5.00 WEEKLY in ARREAR
// (weeks from the anchor: Nov 1, 8, 15, 22, ...).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform, sqlOn } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { billDueSubscriptions } from '../billing/bill-due.js'
import { lineItemPeriod, periodContaining } from '../periods/cadence.js'
import { strategyEnd } from './cancel-strategies.js'

const d = (s: string) => new Date(s)

test('pure: cadence periods are aligned on the anchor and clamp month ends', () => {
  const anchor = d('2026-01-31T00:00:00Z')
  assert.deepEqual(periodContaining(anchor, { period: 'MONTHLY', count: 1 }, d('2026-03-05T00:00:00Z')), { start: d('2026-02-28T00:00:00Z'), end: d('2026-03-31T00:00:00Z') })
  assert.deepEqual(periodContaining(anchor, { period: 'ANNUAL', count: 1 }, d('2026-01-31T00:00:00Z')), { start: anchor, end: d('2027-01-31T00:00:00Z') })
  // before the anchor: the period that ends at it
  assert.deepEqual(periodContaining(anchor, { period: 'WEEKLY', count: 2 }, d('2026-01-30T00:00:00Z')), { start: d('2026-01-17T00:00:00Z'), end: anchor })
  const sub = {
    billing_period: 'MONTHLY' as const, billing_period_count: 1, billing_anchor: d('2026-11-01T00:00:00Z'), billing_cycle: 'anniversary' as const,
    start_date: d('2026-11-01T00:00:00Z'), current_period_start: d('2026-11-01T00:00:00Z'), current_period_end: d('2026-12-01T00:00:00Z'),
  }
  const monthly = { billing_period: 'MONTHLY' as const, billing_period_count: 1 }
  const quarterly = { billing_period: 'QUARTERLY' as const, billing_period_count: 1 }
  const now = d('2026-11-20T00:00:00Z')
  assert.deepEqual(strategyEnd(sub, [monthly, quarterly], now, 'minimum_period_end'), d('2026-12-01T00:00:00Z'))
  assert.deepEqual(strategyEnd(sub, [monthly, quarterly], now, 'maximum_period_end'), d('2027-02-01T00:00:00Z'))
  // the subscription's own cadence is its current period; a calendar subscription aligns an annual cadence on January 1st
  assert.deepEqual(lineItemPeriod(sub, { period: 'MONTHLY', count: 1 }, now), { start: sub.current_period_start, end: sub.current_period_end })
  const calendar = { ...sub, billing_cycle: 'calendar' as const, start_date: d('2026-11-15T00:00:00Z'), current_period_start: d('2026-11-15T00:00:00Z') }
  assert.deepEqual(lineItemPeriod(calendar, { period: 'ANNUAL', count: 1 }, now), { start: d('2026-11-15T00:00:00Z'), end: d('2027-01-01T00:00:00Z') })
  assert.throws(() => strategyEnd(sub, [monthly, monthly, { billing_period: 'ONETIME', billing_period_count: 1 }], now, 'maximum_period_end'), /multi-cadence/)
})

const clock = new ManualClock(d('2026-11-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const sql = sqlOn(p)
const eur = { currency: 'EUR', billing_period: 'MONTHLY', type: 'FIXED', billing_model: 'FLAT_FEE' }

async function setup() {
  clock.set(d('2026-11-01T00:00:00Z'))
  const t = await p.newTenant()
  const team = await created(t.api.post('/v1/plans', {
    name: 'Team',
    prices: [{ ...eur, amount: '30', invoice_cadence: 'ADVANCE', display_name: 'Seat' }, { ...eur, amount: '10', invoice_cadence: 'ARREAR', display_name: 'Support' }],
  }))
  const archive = await created(t.api.post('/v1/addons', { name: 'Archive', lookup_key: 'archive', prices: [{ ...eur, billing_period: 'ANNUAL', amount: '120', invoice_cadence: 'ADVANCE' }] }))
  const standup = await created(t.api.post('/v1/addons', { name: 'Standup', lookup_key: 'standup', prices: [{ ...eur, billing_period: 'WEEKLY', amount: '5', invoice_cadence: 'ARREAR' }] }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: team.id, currency: 'EUR', start_date: '2026-11-01T00:00:00Z' }))
  const cancel = (body: object, id = sub.id) => t.api.post(`/v1/subscriptions/${id}/cancel`, body)
  const events = async (name: string) => (await sql(`SELECT entity_id FROM system_events_outbox WHERE tenant_id = ? AND event_name = ?`, [t.tenantId, name])).length
  return { t, team, archive, standup, customer, sub, cancel, events }
}

test('single-cadence subscriptions refuse both strategies; nothing is written', async () => {
  const { t, team, customer, sub, cancel, events } = await setup()
  const draft = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: team.id, currency: 'EUR', draft: true }))
  clock.set(d('2026-11-20T00:00:00Z'))
  const updates = await events('subscription.updated')
  const outbox = await countRows(p, 'system_events_outbox', t.tenantId)
  for (const type of ['minimum_period_end', 'maximum_period_end', 'minimum-period-end', 'maximum-period-end']) {
    assertError(await cancel({ cancellation_type: type }), 400, 'validation_error', /multi-cadence/)
  }
  assertError(await cancel({ cancellation_type: 'maximum_period_end', cancel_at: '2027-01-01T00:00:00Z' }), 400, 'validation_error', /cancel_at is not accepted/)
  assertError(await cancel({ cancellation_type: 'maximum_period' }), 400, 'validation_error')
  assertError(await cancel({ cancellation_type: 'minimum_period_end' }, draft.id), 400, 'invalid_operation', /DRAFT/)
  const read = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.deepEqual([read.subscription_status, read.cancel_at, read.cancellation_type, read.version], ['ACTIVE', null, null, 1])
  assert.equal(await events('subscription.updated'), updates)
  assert.equal(await countRows(p, 'system_events_outbox', t.tenantId), outbox)
})

test('maximum_period_end ends with the annual add-on, minimum_period_end with the weekly one, terminated once by the schedule', async () => {
  const { t, sub, archive, standup, cancel, events } = await setup()
  clock.set(d('2026-11-11T00:00:00Z'))
  for (const addon of [archive, standup]) {
    const res = await t.api.post(`/v1/subscriptions/${sub.id}/modify`, { change_type: 'addon_attach', addon_id: addon.id })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  clock.set(d('2026-11-20T00:00:00Z'))
  // cadences: MONTHLY (ends Dec 1), ANNUAL (ends Nov 1 2027), WEEKLY (ends Nov 22)
  const max = await cancel({ cancellation_type: 'maximum-period-end' })
  assert.equal(max.status, 200, JSON.stringify(max.body))
  assert.deepEqual(
    [max.body.subscription_status, max.body.cancellation_type, max.body.cancel_at, max.body.cancel_at_period_end, max.body.end_date],
    ['ACTIVE', 'maximum_period_end', '2027-11-01T00:00:00.000Z', false, null],
  )
  const min = await cancel({ cancellation_type: 'minimum_period_end' })
  assert.equal(min.status, 200, JSON.stringify(min.body))
  assert.deepEqual(
    [min.body.subscription_status, min.body.cancellation_type, min.body.cancel_at, min.body.cancel_at_period_end],
    ['ACTIVE', 'minimum_period_end', '2026-11-22T00:00:00.000Z', false],
  )
  assert.equal(await events('subscription.cancelled'), 0)

  clock.set(d('2026-11-21T23:59:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 }, 'not yet')
  clock.set(d('2026-11-22T03:00:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 1, invoices: 1 })
  const read = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.deepEqual([read.subscription_status, read.end_date, read.cancelled_at], ['CANCELLED', '2026-11-22T00:00:00.000Z', '2026-11-22T00:00:00.000Z'])
  const finals = await sql(`SELECT period_start, period_end FROM invoices WHERE subscription_id = ? AND billing_reason = 'PRORATION' AND period_end = ?`, [sub.id, '2026-11-22T00:00:00Z'])
  assert.equal(finals.length, 1)
  assert.equal(await events('subscription.cancelled'), 1)
  clock.set(d('2026-12-05T00:00:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
  assert.equal(await events('subscription.cancelled'), 1)
})

test('minimum_period_end on monthly + annual is the monthly period end', async () => {
  const { t, sub, archive, cancel } = await setup()
  clock.set(d('2026-11-11T00:00:00Z'))
  assert.equal((await t.api.post(`/v1/subscriptions/${sub.id}/modify`, { change_type: 'addon_attach', addon_id: archive.id })).status, 200)
  const res = await cancel({ cancellation_type: 'minimum_period_end' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual([res.body.cancel_at, res.body.cancel_at_period_end, res.body.subscription_status], ['2026-12-01T00:00:00.000Z', true, 'ACTIVE'])
})
