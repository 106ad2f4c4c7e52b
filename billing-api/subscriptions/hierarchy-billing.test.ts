// Billing of subscription hierarchies, usage through ingest -> Kafka -> aggregator -> ClickHouse:
// inherited children's usage on the parent's invoice (children get no invoice), delegated
// invoicing, and the parent's cancellation and trial end cascading to its children.
// Plan (EUR, monthly): Fee 6.00 in ADVANCE, 0.50 per call in ARREAR.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, usePlatform, sqlOn } from '../../test/support/platform.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { billDueSubscriptions } from '../billing/bill-due.js'
import { cancelDueSubscriptions } from '../billing/cancel-due.js'
import { endDueTrials } from '../billing/trial-end-due.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

const sql = sqlOn(p)

async function setup(...externalIds: string[]) {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const eur = { currency: 'EUR', billing_period: 'MONTHLY' }
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro',
    prices: [
      { ...eur, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '6', invoice_cadence: 'ADVANCE', display_name: 'Fee' },
      { ...eur, type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.5', meter_id: meter.id, invoice_cadence: 'ARREAR', display_name: 'Calls' },
    ],
  }))
  const customers: Record<string, any> = {}
  for (const e of externalIds) customers[e] = await created(t.api.post('/v1/customers', { external_id: e }))
  const subscribe = (body: Record<string, unknown>) =>
    created(t.api.post('/v1/subscriptions', { plan_id: plan.id, currency: 'EUR', start_date: '2026-10-01T00:00:00Z', ...body }))
  let n = 0
  const calls = (customer: string, count: number, ts: string) =>
    Array.from({ length: count }, () => ({ event_id: `e${++n}`, event_name: 'call', external_customer_id: customer, timestamp: ts, properties: {} }))
  const ingested = async (events: object[]) => {
    await ingestAll(t.api, events)
    await eventually(async () => ((await usage(t.api, meter.id, {})).value === String(events.length) ? true : undefined), `${events.length} calls in ClickHouse`)
  }
  return { t, customers, subscribe, calls, ingested }
}

/** Invoices of the given subscriptions: reason, customers, period, totals and lines [name, quantity, amount]. */
async function invoicesOf(subscriptionIds: string[]) {
  const invoices = await sql(
    `SELECT id, subscription_id, customer_id, subscription_customer_id, billing_reason, invoice_status,
            to_char(period_start AT TIME ZONE 'UTC', 'MM-DD') AS start, to_char(period_end AT TIME ZONE 'UTC', 'MM-DD') AS end, subtotal::text
       FROM invoices WHERE subscription_id IN (${subscriptionIds.map(() => '?').join(', ')}) ORDER BY period_start, created_at`, subscriptionIds)
  for (const inv of invoices) {
    inv.lines = (await sql(`SELECT display_name, quantity::text, amount::text FROM invoice_line_items WHERE invoice_id = ? ORDER BY display_name`, [inv.id]))
      .map((l: any) => [l.display_name, l.quantity, l.amount])
  }
  return invoices
}

const eventsNamed = async (tenantId: string, name: string) =>
  (await sql(`SELECT entity_id FROM system_events_outbox WHERE tenant_id = ? AND event_name = ? ORDER BY created_at, id`, [tenantId, name])).map((r: any) => r.entity_id)

test('children\'s usage is billed on the parent\'s invoice; children get no invoice; cancelling the parent cancels every child', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, customers, subscribe, calls, ingested } = await setup('acme', 'kid1', 'kid2', 'loner')
  const parent = await subscribe({ external_customer_id: 'acme', inheritance: { child_external_customer_ids: ['kid1', 'kid2'] } })
  const loner = await subscribe({ external_customer_id: 'loner' })
  const children = (await t.api.get(`/v1/subscriptions/${parent.id}/inherited`)).body.inherited_subscriptions.map((s: any) => s.id)
  assert.equal(children.length, 2)
  await ingested([
    ...calls('acme', 3, '2026-10-05T00:00:00Z'), ...calls('kid1', 4, '2026-10-06T00:00:00Z'), ...calls('kid2', 5, '2026-10-31T23:59:59Z'),
    ...calls('loner', 7, '2026-10-07T00:00:00Z'), // not the parent's
    ...calls('kid1', 2, '2026-11-05T00:00:00Z'), // next period
  ])

  clock.set(new Date('2026-11-01T00:00:00Z'))
  const billed = await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  assert.deepEqual(billed, { subscriptions: 4, invoices: 2 }, 'the parent and the loner are invoiced; the children only move on')
  const parentInvoices = await invoicesOf([parent.id])
  const byReason = (invoices: any[], reason: string) => invoices.filter((i) => i.billing_reason === reason)
  // created ACTIVE: the October fee 6.00 in advance at once, on the parent's own invoice
  const [createInvoice] = byReason(parentInvoices, 'SUBSCRIPTION_CREATE')
  assert.deepEqual(
    [createInvoice.customer_id, createInvoice.subscription_customer_id, createInvoice.start, createInvoice.end, createInvoice.subtotal, createInvoice.lines],
    [customers.acme.id, customers.acme.id, '10-01', '11-01', '6.00', [['Fee', '1', '6.00']]],
  )
  const [cycle] = byReason(parentInvoices, 'SUBSCRIPTION_CYCLE')
  // 3 + 4 + 5 = 12 calls x 0.50 = 6.00; the November fee 6.00 in advance
  assert.deepEqual(
    [cycle.customer_id, cycle.subscription_customer_id, cycle.billing_reason, cycle.start, cycle.end, cycle.subtotal, cycle.lines],
    [customers.acme.id, customers.acme.id, 'SUBSCRIPTION_CYCLE', '10-01', '11-01', '12.00', [['Calls', '12', '6.00'], ['Fee', '1', '6.00']]],
  )
  const lonerInvoices = await invoicesOf([loner.id])
  assert.deepEqual(lonerInvoices.map((i: any) => [i.billing_reason, i.subtotal, i.lines]), [
    ['SUBSCRIPTION_CREATE', '6.00', [['Fee', '1', '6.00']]], // October fee in advance
    ['SUBSCRIPTION_CYCLE', '9.50', [['Calls', '7', '3.50'], ['Fee', '1', '6.00']]], // 7 x 0.50 = 3.50 + November fee 6.00
  ])
  for (const id of children) {
    const child = (await t.api.get(`/v1/subscriptions/${id}`)).body
    assert.deepEqual([child.subscription_status, child.current_period_start, child.current_period_end], ['ACTIVE', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'])
  }

  clock.set(new Date('2026-11-20T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${parent.id}/cancel`, { cancellation_type: 'end_of_period' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(await eventsNamed(t.tenantId, 'subscription.cancelled'), [], 'nothing ends before cancel_at')
  clock.set(new Date('2026-12-01T00:00:00Z'))
  await cancelDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const [final] = (await invoicesOf([parent.id])).filter((i: any) => i.billing_reason === 'SUBSCRIPTION_CYCLE' && i.start === '11-01')
  // kid1's 2 November calls on the parent's last cycle invoice; no fee after the end
  assert.deepEqual([final.billing_reason, final.start, final.end, final.subtotal, final.lines], ['SUBSCRIPTION_CYCLE', '11-01', '12-01', '1.00', [['Calls', '2', '1.00']]])
  for (const id of children) {
    const child = (await t.api.get(`/v1/subscriptions/${id}`)).body
    assert.deepEqual([child.subscription_status, child.end_date, child.cancelled_at, child.cancellation_type],
      ['CANCELLED', '2026-12-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z', 'end_of_period'])
  }
  assert.deepEqual((await eventsNamed(t.tenantId, 'subscription.cancelled')).sort(), [parent.id, ...children].sort(), 'one subscription.cancelled per subscription')
  assert.deepEqual(await invoicesOf(children), [], 'children never get an invoice')
})

test('delegated invoicing: invoices are issued to the invoicing customer and name the subscription\'s customer', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, customers, subscribe, calls, ingested } = await setup('user', 'payer')
  const sub = await subscribe({ external_customer_id: 'user', invoicing_customer_id: customers.payer.id })
  assert.deepEqual([sub.subscription_type, sub.invoicing_customer_id], ['DELEGATED_INVOICING', customers.payer.id])
  await ingested(calls('user', 2, '2026-10-10T00:00:00Z'))
  clock.set(new Date('2026-11-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const invoices = await invoicesOf([sub.id])
  // the October fee 6.00 in advance at create; the cycle: 2 calls x 0.50 = 1.00 + November fee 6.00 = 7.00
  assert.deepEqual(invoices.map((i: any) => [i.billing_reason, i.customer_id, i.subscription_customer_id, i.subtotal, i.lines]), [
    ['SUBSCRIPTION_CREATE', customers.payer.id, customers.user.id, '6.00', [['Fee', '1', '6.00']]],
    ['SUBSCRIPTION_CYCLE', customers.payer.id, customers.user.id, '7.00', [['Calls', '2', '1.00'], ['Fee', '1', '6.00']]],
  ])
  const [invoice] = invoices.filter((i: any) => i.billing_reason === 'SUBSCRIPTION_CYCLE')
  const read = (await t.api.get(`/v1/invoices/${invoice.id}`)).body
  assert.deepEqual([read.customer_id, read.subscription_customer_id], [customers.payer.id, customers.user.id])
  const search = async (body: object) => (await t.api.post('/v1/invoices/search', body)).body.items.map((i: any) => i.id).sort()
  const ids = invoices.map((i: any) => i.id).sort()
  assert.deepEqual(await search({ subscription_customer_id: [customers.user.id] }), ids)
  assert.deepEqual(await search({ customer_id: customers.payer.id }), ids)
  assert.deepEqual(await search({ customer_id: customers.user.id }), [])
})

test('grouped invoicing: after grouped_invoicing_add the member\'s invoices go to the parent\'s customer', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, customers, subscribe } = await setup('acme', 'member')
  const parent = await subscribe({ external_customer_id: 'acme', inheritance: {} })
  const member = await subscribe({ external_customer_id: 'member' })
  const res = await t.api.post(`/v1/subscriptions/${member.id}/modify`, { change_type: 'grouped_invoicing_add', parent_subscription_id: parent.id })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  clock.set(new Date('2026-11-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  // the create invoice (October fee 6.00 in advance) was issued before joining the group, to the member itself;
  // the cycle invoice after it (no usage + November fee 6.00) goes to the parent's customer
  assert.deepEqual((await invoicesOf([member.id])).map((i: any) => [i.billing_reason, i.customer_id, i.subscription_customer_id, i.subtotal]), [
    ['SUBSCRIPTION_CREATE', customers.member.id, customers.member.id, '6.00'],
    ['SUBSCRIPTION_CYCLE', customers.acme.id, customers.member.id, '6.00'],
  ])
})

test('a parent\'s trial end ends its children\'s trials; only the parent is invoiced', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe } = await setup('acme', 'kid')
  const parent = await subscribe({ external_customer_id: 'acme', trial_period_days: 14, collection_method: 'send_invoice', inheritance: { child_external_customer_ids: ['kid'] } })
  assert.equal(parent.subscription_status, 'TRIALING')
  const [child] = (await t.api.get(`/v1/subscriptions/${parent.id}/inherited`)).body.inherited_subscriptions
  assert.deepEqual([child.subscription_status, child.trial_end], ['TRIALING', '2026-10-15T00:00:00.000Z'])
  clock.set(new Date('2026-10-15T00:00:00Z'))
  const ended = await endDueTrials(p.ctx, { tenantId: t.tenantId })
  assert.equal(ended.invoices, 1)
  const after = (await t.api.get(`/v1/subscriptions/${child.id}`)).body
  assert.deepEqual([after.subscription_status, after.current_period_start, after.current_period_end], ['ACTIVE', '2026-10-15T00:00:00.000Z', '2026-11-15T00:00:00.000Z'])
  assert.deepEqual((await invoicesOf([parent.id])).map((i: any) => i.billing_reason), ['SUBSCRIPTION_TRIAL_START', 'SUBSCRIPTION_CREATE'])
  assert.equal((await invoicesOf([parent.id]))[1].subtotal, '6.00')
  assert.deepEqual(await invoicesOf([child.id]), [])
})

test('an immediate cancellation of a trialing parent cancels its children, one subscription.cancelled each', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe } = await setup('acme', 'kid1', 'kid2')
  const parent = await subscribe({ external_customer_id: 'acme', trial_period_days: 14, collection_method: 'send_invoice', inheritance: { child_external_customer_ids: ['kid1', 'kid2'] } })
  const children = (await t.api.get(`/v1/subscriptions/${parent.id}/inherited`)).body.inherited_subscriptions.map((s: any) => s.id)
  clock.set(new Date('2026-10-05T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${parent.id}/cancel`, { cancellation_type: 'immediate' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  for (const id of children) {
    const child = (await t.api.get(`/v1/subscriptions/${id}`)).body
    assert.deepEqual([child.subscription_status, child.end_date, child.cancellation_type], ['CANCELLED', '2026-10-05T00:00:00.000Z', 'immediate'])
  }
  assert.deepEqual((await eventsNamed(t.tenantId, 'subscription.cancelled')).sort(), [parent.id, ...children].sort())
  // the parent has nothing left to inherit from
  const add = await t.api.post(`/v1/subscriptions/${parent.id}/inherited`, { add_external_customer_ids: ['kid1'] })
  assert.equal(add.status, 400, JSON.stringify(add.body))
  assert.deepEqual(await invoicesOf(children), [])
})
