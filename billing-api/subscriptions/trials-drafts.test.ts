// Trials (TRIALING, the trial-start invoice, paid billing from trial_end) and drafts (no
// billing until activated, preview available), through HTTP and the billing schedule.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { billDueSubscriptions } from '../billing/bill-due.js'

const clock = new ManualClock(new Date('2026-11-22T10:30:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const fee = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '20', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }

async function invoicesOf(subscriptionId: string) {
  return p.ctx.orm.em.fork().getConnection().execute(
    `SELECT id, billing_reason, invoice_status, payment_status, total::text, paid_at, metadata,
            to_char(period_start AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS start, to_char(period_end AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI') AS end
       FROM invoices WHERE subscription_id = ? ORDER BY period_start, created_at`, [subscriptionId])
}

async function setup(price: object = fee) {
  const t = await p.newTenant()
  await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [price] }))
  return { t, plan, base: { external_customer_id: 'c', plan_id: plan.id, currency: 'EUR' } }
}

test('automatic collection: a pending zero trial invoice with a checkout link; paid billing starts at trial_end', async () => {
  clock.set(new Date('2026-11-22T10:30:00Z'))
  const { t, base } = await setup({ ...fee, trial_period_days: 14 })
  const sub = await created(t.api.post('/v1/subscriptions', base))
  assert.equal(sub.subscription_status, 'TRIALING')
  const [trial] = await invoicesOf(sub.id)
  assert.deepEqual(
    [trial.billing_reason, trial.invoice_status, trial.payment_status, trial.total, trial.start, trial.end, trial.paid_at],
    ['SUBSCRIPTION_TRIAL_START', 'DRAFT', 'PENDING', '0.00', '2026-11-22T10:30', '2026-12-06T10:30', null],
  )
  assert.match(trial.metadata.checkout_url, new RegExp(`^https://checkout\\.meterline\\.invalid/${t.tenantId}/env_[^/]+/invoices/${trial.id}$`))

  clock.set(new Date('2026-12-06T10:29:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 }, 'still in trial')
  clock.set(new Date('2026-12-06T10:30:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 1, invoices: 1 })
  const active = (await t.api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.deepEqual(
    [active.subscription_status, active.current_period_start, active.current_period_end],
    ['ACTIVE', '2026-12-06T10:30:00.000Z', '2027-01-06T10:30:00.000Z'],
  )
  // The first paid period's advance fee (20.00), then the January cycle bills February's.
  clock.set(new Date('2027-01-06T10:30:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 1, invoices: 1 })
  const all = await invoicesOf(sub.id)
  assert.deepEqual(all.map((i: any) => [i.billing_reason, i.total, i.start, i.end]), [
    ['SUBSCRIPTION_TRIAL_START', '0.00', '2026-11-22T10:30', '2026-12-06T10:30'],
    ['SUBSCRIPTION_CREATE', '20.00', '2026-12-06T10:30', '2027-01-06T10:30'],
    ['SUBSCRIPTION_CYCLE', '20.00', '2026-12-06T10:30', '2027-01-06T10:30'],
  ])
})

test('manual collection: the trial invoice is paid at once (SKIPPED); a trial cancelled inside its window owes nothing', async () => {
  clock.set(new Date('2026-11-22T10:30:00Z'))
  const { t, base } = await setup()
  const sub = await created(t.api.post('/v1/subscriptions', { ...base, collection_method: 'send_invoice', trial_start: '2026-11-22T10:30:00Z', trial_end: '2026-12-01T00:00:00Z' }))
  assert.equal(sub.subscription_status, 'TRIALING')
  const [trial] = await invoicesOf(sub.id)
  assert.deepEqual([trial.invoice_status, trial.payment_status, trial.total, trial.metadata], ['SKIPPED', 'SUCCEEDED', '0.00', {}])
  assert.equal(new Date(trial.paid_at).toISOString(), '2026-11-22T10:30:00.000Z')
  clock.set(new Date('2026-11-25T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate', cancel_at: '2026-11-23T00:00:00Z' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual([res.body.subscription_status, res.body.end_date], ['CANCELLED', '2026-11-23T00:00:00.000Z'])
  assert.equal((await invoicesOf(sub.id)).length, 1, 'only the trial invoice')
  clock.set(new Date('2027-01-01T00:00:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
})

test('a draft is not billed, can be previewed, and activation starts billing from its start date', async () => {
  clock.set(new Date('2026-11-22T10:30:00Z'))
  const { t, base } = await setup()
  const draft = await created(t.api.post('/v1/subscriptions', { ...base, draft: true }))
  assert.equal(draft.subscription_status, 'DRAFT')
  const trialDraft = await created(t.api.post('/v1/subscriptions', { ...base, draft: true, trial_period_days: 7 }))
  assert.equal(trialDraft.subscription_status, 'DRAFT')
  assert.equal(await countRows(p, 'invoices', t.tenantId), 0, 'no invoice, not even a trial one')
  clock.set(new Date('2027-03-01T00:00:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
  const preview = await t.api.post('/v1/invoices/internal/preview', { subscription_id: draft.id })
  assert.equal(preview.status, 200, JSON.stringify(preview.body))
  assert.equal(preview.body.total, '20.00')
  assert.equal(await countRows(p, 'invoices', t.tenantId), 0)

  const res = await t.api.post(`/v1/subscriptions/${draft.id}/activate`, { start_date: '2027-03-05T00:00:00Z' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const s = res.body
  assert.deepEqual(
    [s.subscription_status, s.start_date, s.billing_anchor, s.current_period_start, s.current_period_end, s.line_items[0].start_date],
    ['ACTIVE', '2027-03-05T00:00:00.000Z', '2027-03-05T00:00:00.000Z', '2027-03-05T00:00:00.000Z', '2027-04-05T00:00:00.000Z', '2027-03-05T00:00:00.000Z'],
  )
  assertError(await t.api.post(`/v1/subscriptions/${draft.id}/activate`, {}), 400, 'invalid_operation', /ACTIVE/)
  clock.set(new Date('2027-04-05T00:00:00Z'))
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 1, invoices: 1 })

  // Activated without a date: now; the 7-day trial moves with it and its invoice is created now.
  const trialing = (await t.api.post(`/v1/subscriptions/${trialDraft.id}/activate`, {})).body
  assert.deepEqual(
    [trialing.subscription_status, trialing.trial_start, trialing.trial_end, trialing.current_period_end],
    ['TRIALING', '2027-04-05T00:00:00.000Z', '2027-04-12T00:00:00.000Z', '2027-04-12T00:00:00.000Z'],
  )
  const [trial] = await invoicesOf(trialDraft.id)
  assert.deepEqual([trial.billing_reason, trial.start, trial.end], ['SUBSCRIPTION_TRIAL_START', '2027-04-05T00:00', '2027-04-12T00:00'])
  const events = await p.ctx.orm.em.fork().getConnection().execute(
    `SELECT count(*)::int AS n FROM system_events_outbox WHERE tenant_id = ? AND event_name = 'subscription.updated'`, [t.tenantId])
  assert.equal(events[0].n, 2, 'one per activation')
})
