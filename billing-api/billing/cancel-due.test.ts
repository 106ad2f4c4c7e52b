// Job subscription-scheduled-cancellation: reached cancel_at dates (scheduled_date and
// end_of_period) terminate each subscription exactly once, in bounded batches, even when two
// scheduler processes (two Postgres pools) race; a cancel_at not reached yet is left alone.
// Plan (EUR, monthly): fee 6.00 in ADVANCE (billed at creation, SUBSCRIPTION_CREATE), seat 30.00 in ARREAR.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform, sqlOn } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { JOBS } from '../../scheduler/jobs.js'
import { billDueSubscriptions } from './bill-due.js'
import { CANCEL_DUE_BATCH_SIZE, cancelDueSubscriptions } from './cancel-due.js'
import { withSecondProcess } from '../../test/support/second-process.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const sql = sqlOn(p)

async function invoicesOf(subscriptionId: string) {
  return sql(
    `SELECT billing_reason, to_char(period_start AT TIME ZONE 'UTC', 'MM-DD') AS start, to_char(period_end AT TIME ZONE 'UTC', 'MM-DD') AS end, total::text
       FROM invoices WHERE subscription_id = ? ORDER BY period_start, created_at`, [subscriptionId])
}

const cancelledEvents = async (tenantId: string) =>
  (await sql(`SELECT entity_id FROM system_events_outbox WHERE tenant_id = ? AND event_name = 'subscription.cancelled'`, [tenantId])).map((r: any) => r.entity_id as string)

async function setup(n: number) {
  const t = await p.newTenant()
  const eur = { currency: 'EUR', billing_period: 'MONTHLY' }
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro',
    prices: [
      { ...eur, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '6', invoice_cadence: 'ADVANCE', display_name: 'Fee' },
      { ...eur, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '30', invoice_cadence: 'ARREAR', display_name: 'Seat' },
    ],
  }))
  const subs: any[] = []
  for (let i = 0; i < n; i++) {
    await created(t.api.post('/v1/customers', { external_id: `c${i}` }))
    subs.push(await created(t.api.post('/v1/subscriptions', { external_customer_id: `c${i}`, plan_id: plan.id, currency: 'EUR', start_date: '2026-10-01T00:00:00Z' })))
  }
  return { t, subs }
}

test('two concurrent runs terminate every reached cancel_at exactly once, in batches of at most batchSize', async () => {
  assert.equal(CANCEL_DUE_BATCH_SIZE, 50)
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subs } = await setup(8)
  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })).invoices, 8, 'October cycles')
  clock.set(new Date('2026-11-03T00:00:00Z'))
  const [keep, endOfPeriod, ...scheduled] = subs
  for (const s of scheduled) {
    const res = await t.api.post(`/v1/subscriptions/${s.id}/cancel`, { cancellation_type: 'scheduled_date', cancel_at: '2026-11-16T00:00:00Z' })
    assert.equal(res.status, 200, JSON.stringify(res.body))
  }
  assert.equal((await t.api.post(`/v1/subscriptions/${endOfPeriod.id}/cancel`, { cancellation_type: 'end_of_period' })).status, 200)

  clock.set(new Date('2026-11-15T23:59:59Z'))
  assert.deepEqual(await cancelDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { cancelled: 0, invoices: 0, batches: 0 }, 'not yet')
  clock.set(new Date('2026-11-16T05:00:00Z'))
  await withSecondProcess(p, async (ctxB) => {
    const only = { tenantId: t.tenantId, batchSize: 2 }
    const [a, b] = await Promise.all([cancelDueSubscriptions(p.ctx, only), cancelDueSubscriptions(ctxB, only)])
    assert.equal(a.cancelled + b.cancelled, 6, `runs cancelled ${a.cancelled} + ${b.cancelled}`)
    assert.equal(a.invoices + b.invoices, 6)
    // 6 rows in batches of at most 2: at least 3 transactions between the two runs.
    assert.ok(a.batches + b.batches >= 3 && a.cancelled <= 2 * a.batches && b.cancelled <= 2 * b.batches, JSON.stringify([a, b]))
  })
  // Nov 1..16 = 15 of 30 days: seat 30 * 15/30 = 15.00, unused fee -(6.00 - 3.00) = -3.00; total 12.00.
  for (const s of scheduled) {
    assert.deepEqual((await invoicesOf(s.id)).map((i: any) => [i.billing_reason, i.start, i.end, i.total]), [
      ['SUBSCRIPTION_CREATE', '10-01', '11-01', '6.00'],
      ['SUBSCRIPTION_CYCLE', '10-01', '11-01', '36.00'],
      ['PRORATION', '11-01', '11-16', '12.00'],
    ])
    const read = (await t.api.get(`/v1/subscriptions/${s.id}`)).body
    assert.deepEqual([read.subscription_status, read.end_date, read.cancelled_at], ['CANCELLED', '2026-11-16T00:00:00.000Z', '2026-11-16T00:00:00.000Z'])
  }
  assert.deepEqual((await cancelledEvents(t.tenantId)).sort(), scheduled.map((s) => s.id).sort())
  assert.deepEqual(await cancelDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { cancelled: 0, invoices: 0, batches: 0 }, 'a second run finds nothing')

  // The end-of-period cancellation runs at the period boundary: one cycle invoice, no December fee.
  clock.set(new Date('2026-12-01T00:00:00Z'))
  assert.equal(await JOBS['subscription-scheduled-cancellation'].run(p.ctx, { tenant_id: t.tenantId }), 1)
  assert.deepEqual((await invoicesOf(endOfPeriod.id)).map((i: any) => [i.billing_reason, i.start, i.end, i.total]), [
    ['SUBSCRIPTION_CREATE', '10-01', '11-01', '6.00'],
    ['SUBSCRIPTION_CYCLE', '10-01', '11-01', '36.00'],
    ['SUBSCRIPTION_CYCLE', '11-01', '12-01', '30.00'],
  ])
  assert.equal((await t.api.get(`/v1/subscriptions/${endOfPeriod.id}`)).body.subscription_status, 'CANCELLED')
  // The job cancels only: the subscription without a cancel_at stays ACTIVE and unbilled for November.
  assert.equal(await JOBS['subscription-scheduled-cancellation'].run(p.ctx, { tenant_id: t.tenantId }), 0)
  const kept = (await t.api.get(`/v1/subscriptions/${keep.id}`)).body
  assert.deepEqual([kept.subscription_status, kept.current_period_start], ['ACTIVE', '2026-11-01T00:00:00.000Z'])
  assert.equal((await invoicesOf(keep.id)).length, 2, 'create and October cycle only')
  assert.equal((await cancelledEvents(t.tenantId)).length, 7)
})

test('the billing schedule and the cancellation job racing on the same rows terminate each once', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, subs } = await setup(4)
  clock.set(new Date('2026-10-05T00:00:00Z'))
  for (const s of subs) {
    assert.equal((await t.api.post(`/v1/subscriptions/${s.id}/cancel`, { cancellation_type: 'scheduled_date', cancel_at: '2026-10-16T00:00:00Z' })).status, 200)
  }
  clock.set(new Date('2026-10-20T00:00:00Z'))
  await withSecondProcess(p, async (ctxB) => {
    const [a, b] = await Promise.all([
      cancelDueSubscriptions(p.ctx, { tenantId: t.tenantId, batchSize: 1 }),
      billDueSubscriptions(ctxB, { tenantId: t.tenantId, batchSize: 1 }),
    ])
    assert.equal(a.cancelled + b.subscriptions, 4, JSON.stringify([a, b]))
  })
  // Oct 1..16 = 15 of 31 days: seat 30 * 15/31 = 14.516.. -> 14.52; the October fee billed at creation
  // is credited for the unused 16 days: -(6.00 - 6 * 15/31 = 2.903..) = -3.10; total 11.42.
  for (const s of subs) {
    assert.deepEqual((await invoicesOf(s.id)).map((i: any) => [i.billing_reason, i.start, i.end, i.total]), [
      ['SUBSCRIPTION_CREATE', '10-01', '11-01', '6.00'],
      ['PRORATION', '10-01', '10-16', '11.42'],
    ])
  }
  assert.deepEqual((await cancelledEvents(t.tenantId)).sort(), subs.map((s) => s.id).sort())
})
