// Job auto-invoice-threshold (spec: automatic invoice threshold scan) end to end: usage goes
// through ingest -> Kafka -> aggregator -> ClickHouse; an AUTO_INVOICE_THRESHOLD invoice bills
// the usage up to the cut once it reaches the threshold, and the cycle invoice bills only the
// rest, so the two add up to the period's usage exactly. Plus Errors 7 on update.
// Plan (EUR, monthly): seat 30.00 FIXED in ARREAR, 0.50 per call (USAGE) in ARREAR.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, usePlatform, sqlOn } from '../../test/support/platform.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { JOBS } from '../../scheduler/jobs.js'
import { billDueSubscriptions } from './bill-due.js'
import { cancelDueSubscriptions } from './cancel-due.js'
import { AUTO_INVOICE_THRESHOLD_BATCH_SIZE, invoiceUsageOverThreshold } from './auto-invoice-threshold.js'
import { withSecondProcess } from '../../test/support/second-process.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

const sql = sqlOn(p)
const call = (id: string, customer: string, ts: string) => ({ event_id: id, event_name: 'call', external_customer_id: customer, timestamp: ts, properties: {} })

async function setup() {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const eur = { currency: 'EUR', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Usage',
    prices: [
      { ...eur, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '30', display_name: 'Seat' },
      { ...eur, type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.5', meter_id: meter.id, display_name: 'Calls' },
    ],
  }))
  const subscribe = async (externalId: string, threshold: string | null = '2.00') => {
    await created(t.api.post('/v1/customers', { external_id: externalId }))
    return created(t.api.post('/v1/subscriptions', {
      external_customer_id: externalId, plan_id: plan.id, currency: 'EUR', start_date: '2026-10-01T00:00:00Z', auto_invoice_threshold: threshold,
    }))
  }
  const counted = (customer: string, n: number) =>
    eventually(async () => ((await usage(t.api, meter.id, { external_customer_id: customer })).value === String(n) ? true : undefined), `${n} calls of ${customer}`)
  return { t, plan, subscribe, counted }
}

async function invoicesOf(subscriptionId: string) {
  const invoices = await sql(
    `SELECT id, billing_reason, invoice_status, to_char(period_start AT TIME ZONE 'UTC', 'MM-DD"T"HH24:MI') AS start,
            to_char(period_end AT TIME ZONE 'UTC', 'MM-DD"T"HH24:MI') AS end, total::text FROM invoices WHERE subscription_id = ? ORDER BY period_start, created_at`,
    [subscriptionId])
  for (const inv of invoices) {
    inv.lines = (await sql(
      `SELECT display_name, quantity::text, amount::text, to_char(period_start AT TIME ZONE 'UTC', 'MM-DD"T"HH24:MI') AS start
         FROM invoice_line_items WHERE invoice_id = ? ORDER BY display_name`, [inv.id])).map((l: any) => [l.display_name, l.quantity, l.amount, l.start])
    delete inv.id
  }
  return invoices
}

test('threshold invoice for [period start, cut) plus the cycle invoice after the cut bill every call exactly once', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe, counted } = await setup()
  const sub = await subscribe('acme')
  await ingestAll(t.api, [
    call('e1', 'acme', '2026-10-05T00:00:00Z'), call('e2', 'acme', '2026-10-05T01:00:00Z'), call('e3', 'acme', '2026-10-05T02:00:00Z'),
  ])
  await counted('acme', 3)
  // 3 calls * 0.50 = 1.50 < 2.00: nothing yet.
  clock.set(new Date('2026-10-06T00:00:00Z'))
  assert.equal(await JOBS['auto-invoice-threshold'].run(p.ctx, { tenant_id: t.tenantId }), 0)

  await ingestAll(t.api, [
    call('e4', 'acme', '2026-10-08T00:00:00Z'), call('e5', 'acme', '2026-10-10T11:59:59Z'),
    // At or after the cut (12:00, the run's minute): billed by the cycle invoice.
    call('e6', 'acme', '2026-10-10T12:00:00Z'), call('e7', 'acme', '2026-10-10T12:00:29Z'),
    call('e8', 'acme', '2026-10-12T00:00:00Z'), call('e9', 'acme', '2026-10-31T23:59:59Z'),
    // November: the next period.
    call('e10', 'acme', '2026-11-01T00:00:00Z'),
  ])
  await counted('acme', 10)
  // At 12:00:30 the calls before 12:00 are 5 * 0.50 = 2.50 >= 2.00. Two scheduler processes race.
  clock.set(new Date('2026-10-10T12:00:30Z'))
  await withSecondProcess(p, async (ctxB) => {
    const [a, b] = await Promise.all([invoiceUsageOverThreshold(p.ctx, { tenantId: t.tenantId }), invoiceUsageOverThreshold(ctxB, { tenantId: t.tenantId })])
    assert.equal(a.invoices + b.invoices, 1, JSON.stringify([a, b]))
  })
  assert.equal(await JOBS['auto-invoice-threshold'].run(p.ctx, { tenant_id: t.tenantId }), 0, 'same minute again: nothing')
  // After the cut: 4 calls by Nov 1 (2.00), but only 3 by Oct 20 (1.50 < 2.00).
  clock.set(new Date('2026-10-20T00:00:00Z'))
  assert.equal(await JOBS['auto-invoice-threshold'].run(p.ctx, { tenant_id: t.tenantId }), 0)

  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.equal(await JOBS['auto-invoice-threshold'].run(p.ctx, { tenant_id: t.tenantId }), 0, 'an ended period is left to the billing schedule')
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })).invoices, 1)
  // Threshold: 5 calls = 2.50, no seat. Cycle: seat 30.00 + calls from the cut: 4 * 0.50 = 2.00 -> 32.00.
  // Calls billed: 2.50 + 2.00 = 4.50 = 9 October calls * 0.50.
  assert.deepEqual(await invoicesOf(sub.id), [
    {
      billing_reason: 'AUTO_INVOICE_THRESHOLD', invoice_status: 'DRAFT', start: '10-01T00:00', end: '10-10T12:00', total: '2.50',
      lines: [['Calls', '5', '2.50', '10-01T00:00']],
    },
    {
      billing_reason: 'SUBSCRIPTION_CYCLE', invoice_status: 'DRAFT', start: '10-01T00:00', end: '11-01T00:00', total: '32.00',
      lines: [['Calls', '4', '2.00', '10-10T12:00'], ['Seat', '1', '30.00', '10-01T00:00']],
    },
  ])
  // November starts from its own period start: 1 call = 0.50 < 2.00.
  clock.set(new Date('2026-11-02T00:00:00Z'))
  assert.equal(await JOBS['auto-invoice-threshold'].run(p.ctx, { tenant_id: t.tenantId }), 0)
})

test('a scheduled cancellation after a cut bills only the usage after the cut', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe, counted } = await setup()
  const sub = await subscribe('acme', '1.00')
  await ingestAll(t.api, [
    call('e1', 'acme', '2026-10-02T00:00:00Z'), call('e2', 'acme', '2026-10-02T01:00:00Z'), call('e3', 'acme', '2026-10-02T02:00:00Z'),
    call('e4', 'acme', '2026-10-08T00:00:00Z'), call('e5', 'acme', '2026-10-09T00:00:00Z'),
    call('e6', 'acme', '2026-10-13T00:00:00Z'), // after the end: never billed
  ])
  await counted('acme', 6)
  // Oct 5: 3 calls = 1.50 >= 1.00.
  clock.set(new Date('2026-10-05T00:00:00Z'))
  assert.equal(await JOBS['auto-invoice-threshold'].run(p.ctx, { tenant_id: t.tenantId }), 1)
  clock.set(new Date('2026-10-06T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'scheduled_date', cancel_at: '2026-10-12T00:00:00Z' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  clock.set(new Date('2026-10-12T01:00:00Z'))
  assert.equal(await JOBS['auto-invoice-threshold'].run(p.ctx, { tenant_id: t.tenantId }), 0, 'a reached cancel_at is the cancellation job\'s')
  assert.equal((await cancelDueSubscriptions(p.ctx, { tenantId: t.tenantId })).cancelled, 1)
  // Final: seat 30 * 11/31 = 10.645.. -> 10.65; calls from the cut: 2 * 0.50 = 1.00; total 11.65.
  assert.deepEqual(await invoicesOf(sub.id), [
    {
      billing_reason: 'AUTO_INVOICE_THRESHOLD', invoice_status: 'DRAFT', start: '10-01T00:00', end: '10-05T00:00', total: '1.50',
      lines: [['Calls', '3', '1.50', '10-01T00:00']],
    },
    {
      billing_reason: 'PRORATION', invoice_status: 'DRAFT', start: '10-01T00:00', end: '10-12T00:00', total: '11.65',
      lines: [['Calls', '2', '1.00', '10-05T00:00'], ['Seat', '1', '10.65', '10-01T00:00']],
    },
  ])
})

test('bounded batches: two racing scans invoice each subscription over its threshold exactly once', async () => {
  assert.equal(AUTO_INVOICE_THRESHOLD_BATCH_SIZE, 50)
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe, counted } = await setup()
  const over: any[] = []
  for (let i = 0; i < 5; i++) over.push(await subscribe(`over${i}`, '1'))
  const under = await subscribe('under', '5')
  const none = await subscribe('none', null)
  const customers = ['over0', 'over1', 'over2', 'over3', 'over4', 'under', 'none']
  // 4 calls each = 2.00: over the threshold 1, under the threshold 5, and no threshold at all.
  await ingestAll(t.api, customers.flatMap((c) => [1, 2, 3, 4].map((i) => call(`${c}-${i}`, c, `2026-10-0${i + 1}T00:00:00Z`))))
  for (const c of customers) await counted(c, 4)
  clock.set(new Date('2026-10-15T08:00:00Z'))
  await withSecondProcess(p, async (ctxB) => {
    const only = { tenantId: t.tenantId, batchSize: 2 }
    const [a, b] = await Promise.all([invoiceUsageOverThreshold(p.ctx, only), invoiceUsageOverThreshold(ctxB, only)])
    assert.equal(a.invoices + b.invoices, 5, JSON.stringify([a, b]))
    assert.ok(a.scanned <= 2 * a.batches && b.scanned <= 2 * b.batches, JSON.stringify([a, b]))
  })
  for (const s of over) {
    assert.deepEqual((await invoicesOf(s.id)).map((i: any) => [i.billing_reason, i.start, i.end, i.total]), [['AUTO_INVOICE_THRESHOLD', '10-01T00:00', '10-15T08:00', '2.00']])
  }
  assert.equal((await invoicesOf(under.id)).length, 0)
  assert.equal((await invoicesOf(none.id)).length, 0)
  const drafted = await sql(`SELECT count(*)::int AS n FROM system_events_outbox WHERE tenant_id = ? AND event_name = 'invoice.drafted'`, [t.tenantId])
  assert.equal(drafted[0].n, 5)
  assert.equal((await invoiceUsageOverThreshold(p.ctx, { tenantId: t.tenantId })).invoices, 0, 'a second scan invoices nothing')
})

test('Errors 7 on update: negative, non-standalone and fixed-only plans are refused and nothing is written', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subscribe } = await setup()
  const sub = await subscribe('acme', null)
  const fixedOnly = await created(t.api.post('/v1/plans', {
    name: 'Flat', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '9', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }],
  }))
  await created(t.api.post('/v1/customers', { external_id: 'flat' }))
  const flat = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'flat', plan_id: fixedOnly.id, currency: 'EUR' }))
  const child = await subscribe('child', null)
  await sql(`UPDATE subscriptions SET subscription_type = 'INHERITED' WHERE id = ?`, [child.id])
  const events = await countRows(p, 'system_events_outbox', t.tenantId)

  assertError(await t.api.put(`/v1/subscriptions/${sub.id}`, { auto_invoice_threshold: '-0.01' }), 400, 'validation_error', /0 or more/)
  assertError(await t.api.put(`/v1/subscriptions/${flat.id}`, { auto_invoice_threshold: '10' }), 400, 'validation_error', /usage-based plan/)
  assertError(await t.api.put(`/v1/subscriptions/${child.id}`, { auto_invoice_threshold: '10' }), 400, 'validation_error', /not allowed on INHERITED/)
  for (const s of [sub, flat, child]) {
    const read = (await t.api.get(`/v1/subscriptions/${s.id}`)).body
    assert.deepEqual([read.auto_invoice_threshold, read.version], [null, 1])
  }
  assert.equal(await countRows(p, 'system_events_outbox', t.tenantId), events)
  // Zero is a valid threshold (spec: 0 or more).
  const zero = await t.api.put(`/v1/subscriptions/${sub.id}`, { auto_invoice_threshold: '0' })
  assert.equal(zero.status, 200, JSON.stringify(zero.body))
  assert.equal(zero.body.auto_invoice_threshold, '0')
})
