// Cancellation (spec: transitions, Errors 3 and 4): immediate with its final prorated invoice,
// scheduled-date and end-of-period terminations by the billing schedule, exactly once.
// Plan used throughout (EUR, monthly): fee 6.00 in ADVANCE, seat 30.00 in ARREAR, 0.50 per call in ARREAR.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, usePlatform, sqlOn } from '../../test/support/platform.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { assertError } from '../../test/support/assertions.js'
import { billDueSubscriptions } from '../billing/bill-due.js'
import { withSecondProcess } from '../../test/support/second-process.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

const sql = sqlOn(p)

async function setup() {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const eur = { currency: 'EUR', billing_period: 'MONTHLY' }
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro',
    prices: [
      { ...eur, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '6', invoice_cadence: 'ADVANCE', display_name: 'Fee' },
      { ...eur, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '30', invoice_cadence: 'ARREAR', display_name: 'Seat' },
      { ...eur, type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.5', meter_id: meter.id, invoice_cadence: 'ARREAR', display_name: 'Calls' },
    ],
  }))
  const subscribe = async (externalId: string) => {
    await created(t.api.post('/v1/customers', { external_id: externalId }))
    return created(t.api.post('/v1/subscriptions', { external_customer_id: externalId, plan_id: plan.id, currency: 'EUR', start_date: '2026-10-01T00:00:00Z' }))
  }
  return { t, meter, plan, subscribe }
}

async function invoicesOf(subscriptionId: string) {
  const invoices = await sql(
    `SELECT id, billing_reason, invoice_status, to_char(period_start AT TIME ZONE 'UTC', 'MM-DD') AS start, to_char(period_end AT TIME ZONE 'UTC', 'MM-DD') AS end,
            subtotal::text, total::text, amount_due::text FROM invoices WHERE subscription_id = ? ORDER BY period_start, created_at`, [subscriptionId])
  for (const inv of invoices) {
    inv.lines = (await sql(
      `SELECT display_name, quantity::text, amount::text, to_char(period_start AT TIME ZONE 'UTC', 'MM-DD') AS start, to_char(period_end AT TIME ZONE 'UTC', 'MM-DD') AS end
         FROM invoice_line_items WHERE invoice_id = ? ORDER BY invoice_line_items.amount DESC, display_name`, [inv.id]))
      .map((l: any) => [l.display_name, l.quantity, l.amount, l.start, l.end])
    delete inv.id
  }
  return invoices
}

const cancelledEvents = async (tenantId: string) =>
  (await sql(`SELECT entity_id FROM system_events_outbox WHERE tenant_id = ? AND event_name = 'subscription.cancelled'`, [tenantId])).map((r: any) => r.entity_id)

test('immediate, backdated: the final invoice bills the partial period and credits the unused advance fee', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, meter, subscribe } = await setup()
  const sub = await subscribe('acme')
  const call = (i: number, ts: string) => ({ event_id: `e${i}`, event_name: 'call', external_customer_id: 'acme', timestamp: ts, properties: {} })
  await ingestAll(t.api, [
    call(1, '2026-10-05T00:00:00Z'), call(2, '2026-10-06T00:00:00Z'), call(3, '2026-10-07T00:00:00Z'), // October: 3
    ...[4, 5, 6, 7].map((i) => call(i, '2026-11-05T00:00:00Z')), call(8, '2026-11-12T23:59:59Z'), call(9, '2026-11-12T23:00:00Z'), // Nov 1..13: 6
    call(10, '2026-11-13T00:00:00Z'), call(11, '2026-11-15T00:00:00Z'), // after the end: not billed
  ])
  await eventually(async () => ((await usage(t.api, meter.id, { external_customer_id: 'acme' })).value === '11' ? true : undefined), '11 calls in ClickHouse')

  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })).invoices, 1)
  clock.set(new Date('2026-11-20T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate', cancel_at: '2026-11-13T00:00:00Z' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const s = res.body
  assert.deepEqual(
    [s.subscription_status, s.cancellation_type, s.cancel_at, s.end_date, s.cancelled_at, s.cancel_at_period_end],
    ['CANCELLED', 'immediate', '2026-11-13T00:00:00.000Z', '2026-11-13T00:00:00.000Z', '2026-11-20T00:00:00.000Z', false],
  )
  assert.ok(s.line_items.every((li: any) => li.end_date === '2026-11-13T00:00:00.000Z'))
  // Created ACTIVE on Oct 1: October's fee in advance at once, 6.00 (SUBSCRIPTION_CREATE).
  // October cycle: seat 30.00 + 3 calls * 0.50 = 1.50 + November fee in advance 6.00 = 37.50.
  // Final (PRORATION, Nov 1..13 = 12 of 30 days): seat 30 * 12/30 = 12.00, 6 calls * 0.50 = 3.00,
  // unused fee -(6 - 6 * 12/30) = -(6.00 - 2.40) = -3.60; total 12.00 + 3.00 - 3.60 = 11.40.
  // October's fee was used in full, so the final invoice credits only November's.
  assert.deepEqual(await invoicesOf(sub.id), [
    {
      billing_reason: 'SUBSCRIPTION_CREATE', invoice_status: 'DRAFT', start: '10-01', end: '11-01', subtotal: '6.00', total: '6.00', amount_due: '6.00',
      lines: [['Fee', '1', '6.00', '10-01', '11-01']],
    },
    {
      billing_reason: 'SUBSCRIPTION_CYCLE', invoice_status: 'DRAFT', start: '10-01', end: '11-01', subtotal: '37.50', total: '37.50', amount_due: '37.50',
      lines: [['Seat', '1', '30.00', '10-01', '11-01'], ['Fee', '1', '6.00', '11-01', '12-01'], ['Calls', '3', '1.50', '10-01', '11-01']],
    },
    {
      billing_reason: 'PRORATION', invoice_status: 'DRAFT', start: '11-01', end: '11-13', subtotal: '11.40', total: '11.40', amount_due: '11.40',
      lines: [['Seat', '1', '12.00', '11-01', '11-13'], ['Calls', '6', '3.00', '11-01', '11-13'], ['Unused time: Fee', '1', '-3.60', '11-13', '12-01']],
    },
  ])
  assert.deepEqual(await cancelledEvents(t.tenantId), [sub.id])
  // Terminal: cancelling again is refused, the schedule never bills it again.
  assertError(await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate' }), 400, 'invalid_operation', /CANCELLED/)
  clock.set(new Date('2027-02-01T00:00:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
  assert.equal((await invoicesOf(sub.id)).length, 3)
})

test('refusals (Errors 3, 4 and the backdating floor) change nothing', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe, plan } = await setup()
  const sub = await subscribe('c')
  // written by the creation itself (October's fee in advance), before any refused cancel
  const createInvoice = [{
    billing_reason: 'SUBSCRIPTION_CREATE', invoice_status: 'DRAFT', start: '10-01', end: '11-01', subtotal: '6.00', total: '6.00', amount_due: '6.00',
    lines: [['Fee', '1', '6.00', '10-01', '11-01']],
  }]
  assert.deepEqual(await invoicesOf(sub.id), createInvoice)
  clock.set(new Date('2026-10-10T00:00:00Z'))
  const cancel = (body: object) => t.api.post(`/v1/subscriptions/${sub.id}/cancel`, body)
  assertError(await cancel({ cancellation_type: 'immediate', cancel_at: '2026-10-10T00:00:01Z' }), 400, 'validation_error', /use cancellation_type scheduled_date/)
  assertError(await cancel({ cancellation_type: 'immediate', cancel_at: '2026-09-30T23:59:59Z' }), 400, 'validation_error', /not be before the current period start/)
  assertError(await cancel({ cancellation_type: 'scheduled_date', cancel_at: '2026-10-09T00:00:00Z' }), 400, 'validation_error', /strictly in the future/)
  assertError(await cancel({ cancellation_type: 'scheduled_date', cancel_at: '2026-10-10T00:00:00Z' }), 400, 'validation_error', /strictly in the future/)
  assertError(await cancel({ cancellation_type: 'scheduled_date' }), 400, 'validation_error', /cancel_at is required/)
  assertError(await cancel({ cancellation_type: 'end_of_period', cancel_at: '2026-12-01T00:00:00Z' }), 400, 'validation_error', /not accepted/)
  assertError(await cancel({ cancellation_type: 'whenever' }), 400, 'validation_error')
  assertError(await cancel({ cancellation_type: 'immediate', version: 7 }), 409, 'version_conflict')
  assertError(await t.api.post('/v1/subscriptions/subs_nope/cancel', { cancellation_type: 'immediate' }), 404, 'not_found')
  const draft = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'EUR', draft: true }))
  assertError(await t.api.post(`/v1/subscriptions/${draft.id}/cancel`, { cancellation_type: 'immediate' }), 400, 'invalid_operation', /DRAFT/)
  const read = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.deepEqual([read.subscription_status, read.cancel_at, read.cancellation_type, read.version], ['ACTIVE', null, null, 1])
  assert.deepEqual(await invoicesOf(sub.id), createInvoice)
  assert.equal((await invoicesOf(draft.id)).length, 0)
  assert.deepEqual(await cancelledEvents(t.tenantId), [])
})

test('immediate cancel of a subscription that has not started ends it at its start, billing nothing', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, plan } = await setup()
  await created(t.api.post('/v1/customers', { external_id: 'later' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'later', plan_id: plan.id, currency: 'EUR', start_date: '2026-12-01T00:00:00Z' }))
  // created ACTIVE: December's fee in advance is invoiced at once, 6.00
  const fee = { billing_reason: 'SUBSCRIPTION_CREATE', start: '12-01', end: '01-01', subtotal: '6.00', total: '6.00', amount_due: '6.00', lines: [['Fee', '1', '6.00', '12-01', '01-01']] }
  assert.deepEqual(await invoicesOf(sub.id), [{ ...fee, invoice_status: 'DRAFT' }])
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual([res.body.subscription_status, res.body.end_date, res.body.cancelled_at], ['CANCELLED', '2026-12-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z'])
  // December never happens: the cancellation voids its fee and bills nothing else
  assert.deepEqual(await invoicesOf(sub.id), [{ ...fee, invoice_status: 'VOIDED' }])
  const voided = await sql(`SELECT entity_id FROM system_events_outbox WHERE tenant_id = ? AND event_name = 'invoice.voided'`, [t.tenantId])
  assert.equal(voided.length, 1)
  assert.deepEqual(await cancelledEvents(t.tenantId), [sub.id])
})

test('immediate cancel backdated to the start voids the finalized, unpaid SUBSCRIPTION_CREATE invoice and bills nothing', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe } = await setup()
  const sub = await subscribe('back')
  const [createInvoice] = await sql(`SELECT id FROM invoices WHERE subscription_id = ? AND billing_reason = 'SUBSCRIPTION_CREATE'`, [sub.id])
  assert.equal((await t.api.post(`/v1/invoices/${createInvoice.id}/finalize`, {})).status, 200)
  clock.set(new Date('2026-10-05T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate', cancel_at: '2026-10-01T00:00:00Z' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual([res.body.subscription_status, res.body.end_date], ['CANCELLED', '2026-10-01T00:00:00.000Z'])
  // October's fee (6.00) was for a period the subscription never had: voided, no PRORATION invoice
  assert.deepEqual(await invoicesOf(sub.id), [{
    billing_reason: 'SUBSCRIPTION_CREATE', invoice_status: 'VOIDED', start: '10-01', end: '11-01', subtotal: '6.00', total: '6.00', amount_due: '6.00',
    lines: [['Fee', '1', '6.00', '10-01', '11-01']],
  }])
  assert.equal((await t.api.get(`/v1/invoices/${createInvoice.id}`)).body.voided_at, '2026-10-05T00:00:00.000Z')
})

test('scheduled_date: two concurrent schedule runs past cancel_at terminate each subscription exactly once', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe } = await setup()
  const subs: any[] = []
  for (let i = 0; i < 6; i++) subs.push(await subscribe(`c${i}`))
  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })).invoices, 6)
  clock.set(new Date('2026-11-03T00:00:00Z'))
  for (const s of subs) {
    const res = await t.api.post(`/v1/subscriptions/${s.id}/cancel`, { cancellation_type: 'scheduled_date', cancel_at: '2026-11-16T00:00:00Z' })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual([res.body.subscription_status, res.body.cancel_at, res.body.end_date], ['ACTIVE', '2026-11-16T00:00:00.000Z', null])
  }
  clock.set(new Date('2026-11-15T23:59:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 }, 'not yet')
  clock.set(new Date('2026-11-16T05:00:00Z'))
  await withSecondProcess(p, async (ctxB) => {
    const only = { tenantId: t.tenantId, batchSize: 2 }
    const [a, b] = await Promise.all([billDueSubscriptions(p.ctx, only), billDueSubscriptions(ctxB, only)])
    assert.equal(a.invoices + b.invoices, 6, `runs billed ${a.invoices} + ${b.invoices}`)
    assert.equal(a.subscriptions + b.subscriptions, 6)
  })
  // Nov 1..16 = 15 of 30 days: seat 30 * 15/30 = 15.00, no calls, fee credit -(6.00 - 3.00) = -3.00; total 12.00.
  for (const s of subs) {
    const final = (await invoicesOf(s.id)).filter((i: any) => i.billing_reason === 'PRORATION')
    assert.deepEqual(final, [{
      billing_reason: 'PRORATION', invoice_status: 'DRAFT', start: '11-01', end: '11-16', subtotal: '12.00', total: '12.00', amount_due: '12.00',
      lines: [['Seat', '1', '15.00', '11-01', '11-16'], ['Calls', '0', '0.00', '11-01', '11-16'], ['Unused time: Fee', '1', '-3.00', '11-16', '12-01']],
    }])
    const read = (await t.api.get(`/v1/subscriptions/${s.id}`)).body
    assert.deepEqual([read.subscription_status, read.end_date, read.cancelled_at], ['CANCELLED', '2026-11-16T00:00:00.000Z', '2026-11-16T00:00:00.000Z'])
  }
  assert.deepEqual((await cancelledEvents(t.tenantId)).sort(), subs.map((s) => s.id).sort())
  clock.set(new Date('2027-01-01T00:00:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
})

test('end_of_period: stays active until current_period_end, then one cycle invoice without the next advance fee', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe } = await setup()
  const sub = await subscribe('eop')
  clock.set(new Date('2026-10-20T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'end_of_period' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(
    [res.body.subscription_status, res.body.cancel_at, res.body.cancel_at_period_end, res.body.cancellation_type],
    ['ACTIVE', '2026-11-01T00:00:00.000Z', true, 'end_of_period'],
  )
  assert.deepEqual(await cancelledEvents(t.tenantId), [])
  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 1, invoices: 1 })
  // October's fee 6.00 was billed in advance at creation (SUBSCRIPTION_CREATE) and is used in full.
  // October cycle: seat 30.00 + no calls; no November fee since the subscription ends on Nov 1.
  assert.deepEqual(await invoicesOf(sub.id), [
    {
      billing_reason: 'SUBSCRIPTION_CREATE', invoice_status: 'DRAFT', start: '10-01', end: '11-01', subtotal: '6.00', total: '6.00', amount_due: '6.00',
      lines: [['Fee', '1', '6.00', '10-01', '11-01']],
    },
    {
      billing_reason: 'SUBSCRIPTION_CYCLE', invoice_status: 'DRAFT', start: '10-01', end: '11-01', subtotal: '30.00', total: '30.00', amount_due: '30.00',
      lines: [['Seat', '1', '30.00', '10-01', '11-01'], ['Calls', '0', '0.00', '10-01', '11-01']],
    },
  ])
  const read = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.deepEqual([read.subscription_status, read.end_date, read.cancelled_at], ['CANCELLED', '2026-11-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z'])
  assert.deepEqual(await cancelledEvents(t.tenantId), [sub.id])
  clock.set(new Date('2026-12-05T00:00:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
})
