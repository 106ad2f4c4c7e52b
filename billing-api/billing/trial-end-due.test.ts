// Job subscription-trial-end: every ended trial starts paid billing exactly once (ACTIVE, the
// first paid period's advance fee, one subscription.updated), in bounded batches, even when two
// scheduler processes race. A trial whose cancel_at is also reached is left to the cancellation job.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform, sqlOn } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { JOBS } from '../../scheduler/jobs.js'
import { cancelDueSubscriptions } from './cancel-due.js'
import { TRIAL_END_DUE_BATCH_SIZE, endDueTrials } from './trial-end-due.js'
import { withSecondProcess } from '../../test/support/second-process.js'

const clock = new ManualClock(new Date('2026-11-22T10:30:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const sql = sqlOn(p)
const fee = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '20', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', trial_period_days: 14 }

async function invoicesOf(subscriptionId: string) {
  return (await sql(
    `SELECT billing_reason, total::text, to_char(period_start AT TIME ZONE 'UTC', 'MM-DD"T"HH24:MI') AS start, to_char(period_end AT TIME ZONE 'UTC', 'MM-DD"T"HH24:MI') AS end
       FROM invoices WHERE subscription_id = ? ORDER BY period_start, created_at`, [subscriptionId])).map((i: any) => [i.billing_reason, i.total, i.start, i.end])
}

const events = async (subscriptionId: string, name: string) =>
  (await sql(`SELECT count(*)::int AS n FROM system_events_outbox WHERE entity_id = ? AND event_name = ?`, [subscriptionId, name]))[0].n

test('two concurrent runs end each due trial exactly once, in batches of at most batchSize', async () => {
  assert.equal(TRIAL_END_DUE_BATCH_SIZE, 50)
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [fee] }))
  const subs: any[] = []
  for (let i = 0; i < 5; i++) {
    await created(t.api.post('/v1/customers', { external_id: `c${i}` }))
    subs.push(await created(t.api.post('/v1/subscriptions', { external_customer_id: `c${i}`, plan_id: plan.id, currency: 'EUR' })))
  }
  assert.ok(subs.every((s) => s.subscription_status === 'TRIALING' && s.trial_end === '2026-12-06T10:30:00.000Z'))
  const updatedBefore = await events(subs[0].id, 'subscription.updated')

  clock.set(new Date('2026-12-06T10:29:59Z'))
  assert.deepEqual(await endDueTrials(p.ctx, { tenantId: t.tenantId }), { ended: 0, invoices: 0, batches: 0 }, 'still in trial')
  clock.set(new Date('2026-12-06T11:00:00Z'))
  await withSecondProcess(p, async (ctxB) => {
    const only = { tenantId: t.tenantId, batchSize: 2 }
    const [a, b] = await Promise.all([endDueTrials(p.ctx, only), endDueTrials(ctxB, only)])
    assert.equal(a.ended + b.ended, 5, `runs ended ${a.ended} + ${b.ended}`)
    assert.equal(a.invoices + b.invoices, 5)
    assert.ok(a.batches + b.batches >= 3 && a.ended <= 2 * a.batches && b.ended <= 2 * b.batches, JSON.stringify([a, b]))
  })
  for (const s of subs) {
    const read = (await t.api.get(`/v1/subscriptions/${s.id}`)).body
    assert.deepEqual(
      [read.subscription_status, read.current_period_start, read.current_period_end],
      ['ACTIVE', '2026-12-06T10:30:00.000Z', '2027-01-06T10:30:00.000Z'],
    )
    assert.deepEqual(await invoicesOf(s.id), [
      ['SUBSCRIPTION_TRIAL_START', '0.00', '11-22T10:30', '12-06T10:30'],
      ['SUBSCRIPTION_CREATE', '20.00', '12-06T10:30', '01-06T10:30'],
    ])
    assert.equal(await events(s.id, 'subscription.updated'), updatedBefore + 1)
  }
  assert.equal(await JOBS['subscription-trial-end'].run(p.ctx, { tenant_id: t.tenantId }), 0, 'a second run finds nothing')
  assert.equal((await invoicesOf(subs[0].id)).length, 2)
})

test('a trial cancelled at a reached cancel_at is ended by the cancellation job, not by the trial-end job', async () => {
  clock.set(new Date('2026-11-22T10:30:00Z'))
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [fee] }))
  await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'EUR' }))
  clock.set(new Date('2026-11-25T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'scheduled_date', cancel_at: '2026-12-01T00:00:00Z' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  clock.set(new Date('2026-12-07T00:00:00Z'))
  assert.equal((await endDueTrials(p.ctx, { tenantId: t.tenantId })).ended, 0)
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.subscription_status, 'TRIALING')
  assert.equal((await cancelDueSubscriptions(p.ctx, { tenantId: t.tenantId })).cancelled, 1)
  const read = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  // Cancelled inside the trial: nothing owed beyond the zero trial invoice.
  assert.deepEqual([read.subscription_status, read.end_date], ['CANCELLED', '2026-12-01T00:00:00.000Z'])
  assert.deepEqual(await invoicesOf(sub.id), [['SUBSCRIPTION_TRIAL_START', '0.00', '11-22T10:30', '12-06T10:30']])
  assert.equal(await events(sub.id, 'subscription.cancelled'), 1)
})
