// Plan price sync (POST /plans/{id}/sync/subscriptions): the subscriptions behind the plan take
// its new prices from the sync's time, its archived ones end there, prorated as a plan change.
// Plan Team (monthly): Seat 30.00 EUR FIXED in ADVANCE (the subscription has 2 seats), Support
// 10.00 EUR in ARREAR, Basic 15.00 GBP in ADVANCE. On Nov 11 Platform 100.00 EUR in ADVANCE,
// Care 20.00 EUR in ARREAR and Dollar 50.00 USD are added and Support is archived.
// November has 30 days: Nov 11 leaves 20/30 of the period.
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
const monthly = { billing_period: 'MONTHLY', type: 'FIXED', billing_model: 'FLAT_FEE' }
const eur = { ...monthly, currency: 'EUR' }

async function setup() {
  clock.set(new Date('2026-11-01T00:00:00Z'))
  const t = await p.newTenant()
  const team = await created(t.api.post('/v1/plans', {
    name: 'Team',
    prices: [
      { ...eur, amount: '30', invoice_cadence: 'ADVANCE', display_name: 'Seat' }, { ...eur, amount: '10', invoice_cadence: 'ARREAR', display_name: 'Support' },
      { ...monthly, currency: 'GBP', amount: '15', invoice_cadence: 'ADVANCE', display_name: 'Basic' },
    ],
  }))
  const other = await created(t.api.post('/v1/plans', { name: 'Other', prices: [{ ...eur, amount: '40', invoice_cadence: 'ADVANCE', display_name: 'Other fee' }] }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const subscribe = (plan_id: string, currency = 'EUR', extra: object = {}) =>
    created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id, currency, start_date: '2026-11-01T00:00:00Z', ...extra }))
  const sub = await subscribe(team.id)
  const seat = sub.line_items.find((l: any) => l.display_name === 'Seat')
  await sql(`UPDATE subscription_line_items SET quantity = 2 WHERE id = ?`, [seat.id])
  const pound = await subscribe(team.id, 'GBP')
  const draft = await subscribe(team.id, 'EUR', { draft: true })
  const onOther = await subscribe(other.id)
  const price = (entity_id: string, body: object) => created(t.api.post('/v1/prices', { entity_type: 'PLAN', entity_id, ...body }))
  const rows = async () => Object.fromEntries(await Promise.all(
    ['subscriptions', 'subscription_line_items', 'invoices', 'invoice_line_items', 'system_events_outbox'].map(async (table) => [table, await countRows(p, table, t.tenantId)]),
  ))
  const v2 = async (id: string) => (await t.api.get(`/v2/subscriptions/${id}`)).body
  return { t, team, other, sub, seat, pound, draft, onOther, price, rows, v2, sync: () => t.api.post(`/v1/plans/${team.id}/sync/subscriptions`, undefined) }
}

/** Nov 11: three prices added to Team (sequences 4, 5, 6), one to Other; Team's Support and GBP Basic archived. */
async function changePrices(s: Awaited<ReturnType<typeof setup>>) {
  clock.set(new Date('2026-11-11T00:00:00Z'))
  await s.price(s.team.id, { ...eur, amount: '100', invoice_cadence: 'ADVANCE', display_name: 'Platform' })
  await s.price(s.team.id, { ...eur, amount: '20', invoice_cadence: 'ARREAR', display_name: 'Care' })
  await s.price(s.team.id, { ...monthly, currency: 'USD', amount: '50', invoice_cadence: 'ADVANCE', display_name: 'Dollar' })
  await s.price(s.other.id, { ...eur, amount: '5', invoice_cadence: 'ADVANCE', display_name: 'Other extra' })
  for (const name of ['Support', 'Basic']) {
    const id = s.team.prices.find((x: any) => x.display_name === name).id
    assert.equal((await s.t.api.delete(`/v1/prices/${id}`)).status, 200)
  }
}

const items = (l: any[]) => l.map((x) => [x.display_name, x.quantity, x.start_date.slice(5, 10), x.end_date?.slice(5, 10) ?? null]).sort()

test('sync: new prices start and archived ones end at the sync time, prorated; the next cycle bills exactly the new line-up', async () => {
  const s = await setup()
  const { t, team, sub, seat, v2 } = s
  assert.deepEqual([(await v2(sub.id)).plan_prices_out_of_sync, (await v2(sub.id)).synced_price_sequence], [false, 3])
  await changePrices(s)
  assert.equal((await v2(sub.id)).plan_prices_out_of_sync, true)

  const res = await s.sync()
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.match(res.body.workflow_id, /^plansync_/)
  assert.equal(typeof res.body.run_id, 'string')
  assert.deepEqual(res.body.synced_subscription_ids, [sub.id])
  assert.deepEqual(res.body.skipped.map((x: any) => x.subscription_id), [s.pound.id, s.draft.id])
  assert.match(res.body.skipped[0].reason, /no published GBP prices/)
  assert.match(res.body.skipped[1].reason, /DRAFT/)
  assert.equal(res.body.message, `plan ${team.id} at price sequence 6: 1 subscription(s) synced, 2 skipped`)

  const after = await v2(sub.id)
  assert.deepEqual([after.plan_prices_out_of_sync, after.synced_price_sequence, after.plan_id], [false, 6, team.id])
  // Seat (2 seats) is untouched; Support ended; Platform and Care started; no USD price
  assert.deepEqual(items(after.line_items), [['Care', '1', '11-11', null], ['Platform', '1', '11-11', null], ['Seat', '2', '11-01', null]])
  assert.equal(after.line_items.find((l: any) => l.display_name === 'Seat').id, seat.id)
  const archived = await t.api.post('/v1/subscriptions/lineitems/search', { subscription_ids: [sub.id], status: 'archived' })
  assert.deepEqual(items(archived.body.items), [['Support', '1', '11-01', '11-11']])
  // the skipped ones keep their line items and stay behind
  assert.deepEqual([(await v2(s.pound.id)).plan_prices_out_of_sync, (await v2(s.pound.id)).line_items.length], [true, 1])
  assert.equal((await v2(s.draft.id)).plan_prices_out_of_sync, true)

  // Platform 100.00 for the 20 remaining days: 100.00 - 100 * 10/30 (33.33) = 66.67, at once; Care and Support bill in arrear
  const invoices = async () => sql(`SELECT billing_reason, total::text, period_start FROM invoices WHERE subscription_id = ? ORDER BY created_at, id`, [sub.id])
  const [, proration] = await invoices()
  assert.deepEqual([proration.billing_reason, proration.total, new Date(proration.period_start).toISOString()], ['PRORATION', '66.67', '2026-11-11T00:00:00.000Z'])
  const prorationLines = await sql(`SELECT display_name, quantity::text, amount::text FROM invoice_line_items il JOIN invoices i ON i.id = il.invoice_id
    WHERE i.subscription_id = ? AND i.billing_reason = 'PRORATION'`, [sub.id])
  assert.deepEqual(prorationLines.map((l: any) => [l.display_name, l.quantity, l.amount]), [['Remaining time: Platform', '1', '66.67']])

  // December cycle: Seat 2 x 30.00 = 60.00 and Platform 100.00 for December in advance; in arrear Care for its
  // 20 of 30 days (20.00 * 20/30 = 13.33) and Support for its 10 of 30 (10.00 * 10/30 = 3.33): 176.66
  clock.set(new Date('2026-12-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const [cycle] = await sql(`SELECT id, total::text FROM invoices WHERE subscription_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE'`, [sub.id])
  const cycleLines = await sql(`SELECT display_name, amount::text FROM invoice_line_items WHERE invoice_id = ? ORDER BY display_name`, [cycle.id])
  assert.deepEqual(cycleLines.map((l: any) => [l.display_name, l.amount]), [['Care', '13.33'], ['Platform', '100.00'], ['Seat', '60.00'], ['Support', '3.33']])
  assert.equal(cycle.total, '176.66')
  assert.deepEqual((await invoices()).map((i: any) => [i.billing_reason, i.total]), [['SUBSCRIPTION_CREATE', '30.00'], ['PRORATION', '66.67'], ['SUBSCRIPTION_CYCLE', '176.66']])
})

test('a second sync changes nothing; another plan\'s subscription and another tenant are untouched', async () => {
  const s = await setup()
  await changePrices(s)
  const other = await p.newTenant('Other tenant')
  const before = await s.rows()
  assertError(await other.api.post(`/v1/plans/${s.team.id}/sync/subscriptions`, undefined), 404, 'not_found')
  assert.deepEqual(await s.rows(), before)
  assert.equal((await s.v2(s.sub.id)).plan_prices_out_of_sync, true)

  assert.deepEqual((await s.sync()).body.synced_subscription_ids, [s.sub.id])
  const written = await s.rows()
  const line = async () => items((await s.v2(s.sub.id)).line_items)
  const lineUp = await line()
  for (const at of ['2026-11-11T00:00:20Z', '2026-11-12T00:00:00Z']) {
    clock.set(new Date(at))
    const again = await s.sync()
    assert.equal(again.status, 200, JSON.stringify(again.body))
    assert.deepEqual(again.body.synced_subscription_ids, [])
    assert.equal(again.body.skipped.length, 2)
  }
  assert.deepEqual(await s.rows(), written)
  assert.deepEqual(await line(), lineUp)

  // the subscription on plan Other is still behind its own plan, with its line items as they were
  const onOther = await s.v2(s.onOther.id)
  assert.deepEqual([onOther.plan_prices_out_of_sync, items(onOther.line_items)], [true, [['Other fee', '1', '11-01', null]]])
  assertError(await s.t.api.post('/v1/plans/plan_nope/sync/subscriptions', undefined), 404, 'not_found')
  assertError(await s.t.api.post(`/v1/plans/${'x'.repeat(101)}/sync/subscriptions`, undefined), 414, 'validation_error')

  // a price added later puts it behind again; its sync takes only that price, with its own PRORATION invoice
  await s.price(s.team.id, { ...eur, amount: '30', invoice_cadence: 'ADVANCE', display_name: 'Extra' })
  const res = await s.sync()
  assert.deepEqual(res.body.synced_subscription_ids, [s.sub.id])
  // Nov 12 leaves 19/30: 30.00 - 30 * 11/30 (11.00) = 19.00
  const prorations = await sql(`SELECT total::text FROM invoices WHERE subscription_id = ? AND billing_reason = 'PRORATION' ORDER BY created_at`, [s.sub.id])
  assert.deepEqual(prorations.map((r: any) => r.total), ['66.67', '19.00'])
  assert.equal((await s.v2(s.sub.id)).synced_price_sequence, 7)
})

test('an INHERITED child follows its parent\'s sync; a trialing subscription takes the price without a proration', async () => {
  const s = await setup()
  await created(s.t.api.post('/v1/customers', { external_id: 'kid' }))
  const parent = await created(s.t.api.post('/v1/subscriptions', {
    customer_id: s.sub.customer_id, plan_id: s.other.id, currency: 'EUR', start_date: '2026-11-01T00:00:00Z', inheritance: { child_external_customer_ids: ['kid'] },
  }))
  const trialing = await created(s.t.api.post('/v1/subscriptions', { customer_id: s.sub.customer_id, plan_id: s.other.id, currency: 'EUR', start_date: '2026-11-01T00:00:00Z', trial_period_days: 14 }))
  assert.equal(trialing.subscription_status, 'TRIALING')
  const [child] = await sql(`SELECT id FROM subscriptions WHERE parent_subscription_id = ?`, [parent.id])
  await changePrices(s)
  assert.equal((await s.v2(child.id)).plan_prices_out_of_sync, true)
  const res = await s.t.api.post(`/v1/plans/${s.other.id}/sync/subscriptions`, undefined)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body.synced_subscription_ids, [s.onOther.id, parent.id, trialing.id])
  for (const id of [child.id, parent.id, trialing.id]) assert.deepEqual([(await s.v2(id)).plan_prices_out_of_sync, (await s.v2(id)).synced_price_sequence], [false, 2])
  assert.deepEqual(items((await s.v2(trialing.id)).line_items), [['Other extra', '1', '11-11', null], ['Other fee', '1', '11-01', null]])
  // Other extra 5.00 for the 20 remaining days: 5.00 - 5 * 10/30 (1.67) = 3.33 on the paid ones; nothing during the trial
  const prorations = await sql(`SELECT subscription_id, total::text FROM invoices WHERE billing_reason = 'PRORATION' AND tenant_id = ? ORDER BY created_at`, [s.t.tenantId])
  assert.deepEqual(prorations.map((r: any) => [r.subscription_id, r.total]), [[s.onOther.id, '3.33'], [parent.id, '3.33']])
})
