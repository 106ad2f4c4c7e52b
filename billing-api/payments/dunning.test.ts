// Failed payments and the dunning schedule against the real Redis/BullMQ (delayed jobs worked
// by the scheduler's worker), Stripe collection and checkout links against the Stripe
// stand-in (test/support/stripe-stand-in.ts, a local server in place of Stripe's API).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { Queue } from 'bullmq'
import Stripe from 'stripe'
import type { Redis } from 'ioredis'
import { ManualClock } from '../../platform/clock.js'
import { createRedis } from '../../platform/redis.js'
import { assertError } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { eventually, startTestPlatform, type TestPlatform } from '../../test/support/platform.js'
import { StripeStandIn } from '../../test/support/stripe-stand-in.js'
import { billedInvoices, eventNames, sql, type Tenant } from '../../test/support/invoices.js'
import { PAYMENT_RETRY_QUEUE } from './retry-queue.js'
import { runPaymentRetry } from './retry-step.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const DAY = 86_400_000
const clock = new ManualClock(NOW)
let p: TestPlatform
let stripe: StripeStandIn
let redis: Redis
let queue: Queue

before(async () => {
  stripe = await new StripeStandIn().start()
  p = await startTestPlatform({
    services: ['billing-api', 'scheduler'], clock,
    // the first retry comes 300 ms after a failure, so the worker runs it during the test
    config: { paymentRetryScheduleMs: [300, DAY, 2 * DAY], integrations: { encryptionKey: Buffer.alloc(32, 7), rateLimitPerSecond: 50, stripeApiBase: stripe.url } },
  })
  redis = createRedis(p.config.redisUrl)
  queue = new Queue(PAYMENT_RETRY_QUEUE, { connection: redis, prefix: p.config.redisPrefix })
})
after(async () => {
  await queue?.close()
  await redis?.quit()
  await p?.stop()
  await stripe?.stop()
})

async function finalizedInvoice(t?: Tenant): Promise<{ t: Tenant; id: string }> {
  t ??= await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  assert.equal((await t.api.post(`/v1/invoices/${id}/finalize`, {})).status, 200)
  return { t, id }
}

const WEBHOOK_SECRET = 'whsec_0123456789abcdef'

async function stripeTenant() {
  const t = await p.newTenant()
  await created(t.api.post('/v1/integrations/connections', { provider: 'stripe', name: 'Stripe', credentials: { api_key: 'sk_test_0123456789abcdef', webhook_secret: WEBHOOK_SECRET } }))
  return t
}

/** A signed Stripe event delivered to the tenant's inbound webhook. */
function deliver(t: Awaited<ReturnType<typeof stripeTenant>>, id: string, type: string, object: Record<string, unknown>) {
  const payload = JSON.stringify({ id, object: 'event', type, created: Math.floor(NOW.getTime() / 1000), data: { object } })
  const signature = new Stripe('sk_test_signer').webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(clock.now().getTime() / 1000) })
  return p.client().request('POST', `/webhooks/stripe/${t.tenantId}/${t.environments.production}`, payload, { 'stripe-signature': signature })
}

const fail = (t: Tenant, id: string, body: Record<string, unknown> = {}) => t.api.post(`/v1/invoices/${id}/payment_failures`, body)

test('failures follow the schedule as delayed jobs; the worker runs a due retry; exhausted after the last', async () => {
  const { t, id } = await finalizedInvoice()
  const first = await fail(t, id, { failure_code: 'card_declined', reason: 'Card declined', idempotency_key: 'f1' })
  assert.equal(first.status, 201, JSON.stringify(first.body))
  assert.deepEqual([first.body.failure.attempt, first.body.failure.failure_code, first.body.failure.next_retry_at], [1, 'card_declined', '2026-09-15T10:00:00.300Z'])
  assert.equal(first.body.invoice.payment_status, 'FAILED')
  // A retried request answers its first failure and records nothing.
  const again = await fail(t, id, { failure_code: 'card_declined', idempotency_key: 'f1' })
  assert.equal(again.status, 200)
  assert.equal(again.body.failure.id, first.body.failure.id)
  assert.equal(again.body.replayed, true)

  // The worker picks up the delayed job; with no provider to charge, the tenant is told.
  await eventually(async () => ((await eventNames(p, id)).includes('invoice.payment_retry_due') ? true : undefined), 'the first retry')
  const [due] = await sql(p, `SELECT payload FROM system_events_outbox WHERE entity_id = ? AND event_name = 'invoice.payment_retry_due'`, [id])
  assert.equal(due.payload.attempt, 1)

  const second = await fail(t, id, { reason: 'still declined' })
  assert.deepEqual([second.body.failure.attempt, second.body.failure.next_retry_at], [2, '2026-09-16T10:00:00.000Z'])
  const third = await fail(t, id)
  assert.deepEqual([third.body.failure.attempt, third.body.failure.next_retry_at], [3, '2026-09-17T10:00:00.000Z'])
  const jobs = await Promise.all([2, 3, 4].map((n) => queue.getJob(`dunning-${id}-${n}`)))
  assert.deepEqual(jobs.map((j) => j?.opts.delay ?? null), [DAY, 2 * DAY, null])
  assert.deepEqual(jobs[0]?.data, { tenant_id: t.tenantId, environment_id: first.body.invoice.environment_id, invoice_id: id, attempt: 2 })
  const fourth = await fail(t, id)
  assert.deepEqual([fourth.body.failure.attempt, fourth.body.failure.next_retry_at], [4, null])
  assert.equal(await queue.getJob(`dunning-${id}-5`), undefined)
  const exhausted = await sql(p, `SELECT payload FROM system_events_outbox WHERE entity_id = ? AND event_name = 'invoice.payment_failed' ORDER BY created_at, id`, [id])
  assert.deepEqual(exhausted.map((e) => e.payload.retries_exhausted), [false, false, false, true])

  const env = first.body.invoice.environment_id
  // A retry of an older failure is stale: the newest failure owns the schedule.
  assert.equal(await runPaymentRetry(p.ctx, { tenant_id: t.tenantId, environment_id: env, invoice_id: id, attempt: 2 }), 'stopped')
  assert.equal(await runPaymentRetry(p.ctx, { tenant_id: t.tenantId, environment_id: env, invoice_id: id, attempt: 4 }), 'notified')
  // Paid: FAILED -> SUCCEEDED, and the schedule stops.
  const paid = await t.api.post(`/v1/invoices/${id}/payments`, { amount: '25.00' })
  assert.equal(paid.body.invoice.payment_status, 'SUCCEEDED')
  assert.equal(await runPaymentRetry(p.ctx, { tenant_id: t.tenantId, environment_id: env, invoice_id: id, attempt: 4 }), 'stopped')
  assertError(await fail(t, id), 400, 'invalid_operation', /SUCCEEDED/)
  const history = (await t.api.get(`/v1/invoices/${id}/payments`)).body
  assert.deepEqual(history.failures.map((f: any) => f.attempt), [1, 2, 3, 4])
})

test('a voided invoice stops its schedule; drafts, stale versions and other tenants are refused', async () => {
  const { t, id } = await finalizedInvoice()
  const f = await fail(t, id, { failed_at: '2026-09-15T09:00:00Z' })
  assert.equal(f.body.failure.failed_at, '2026-09-15T09:00:00.000Z')
  const env = f.body.invoice.environment_id
  assert.equal((await t.api.post(`/v1/invoices/${id}/void`, {})).status, 200)
  assert.equal(await runPaymentRetry(p.ctx, { tenant_id: t.tenantId, environment_id: env, invoice_id: id, attempt: 1 }), 'stopped')
  const { invoiceIds: [draft] } = await billedInvoices(p, t)
  assertError(await fail(t, draft), 400, 'invalid_operation', /DRAFT/)
  const { id: other } = await finalizedInvoice(t)
  const inv = (await t.api.get(`/v1/invoices/${other}`)).body
  assertError(await fail(t, other, { version: inv.version + 1 }), 409, 'version_conflict')
  const stranger = await p.newTenant()
  assertError(await fail(stranger, other), 404, 'not_found')
  assertError(await stranger.api.post(`/v1/invoices/${other}/payment_link`, { success_url: 'https://example.com/ok' }), 404, 'not_found')
  assertError(await fail(t, other, { surprise: 1 }), 400, 'validation_error')
  const [{ n }] = await sql(p, `SELECT count(*)::int AS n FROM invoice_payment_failures WHERE invoice_id IN (?, ?)`, [draft, other])
  assert.equal(n, 0)
  assert.equal((await t.api.get(`/v1/invoices/${other}`)).body.payment_status, 'PENDING')
})

test('with Stripe: a declined retry records the next failure, the following retry collects the invoice', async () => {
  const t = await stripeTenant()
  const { id } = await finalizedInvoice(t)
  const pushed = await t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: id, provider: 'stripe', method: 'push' })
  assert.equal(pushed.status, 200, JSON.stringify(pushed.body))
  const stripeInvoice = pushed.body.provider_entity_id
  stripe.declineNextPay = 1
  assert.equal((await fail(t, id, { failure_code: 'card_declined' })).status, 201)
  // The worker's retry is declined by Stripe: failure 2, next retry a day later.
  const failures = await eventually(async () => {
    const rows = await sql(p, `SELECT attempt, failure_code, reason, idempotency_key, next_retry_at FROM invoice_payment_failures WHERE invoice_id = ? ORDER BY attempt`, [id])
    return rows.length === 2 ? rows : undefined
  }, 'the declined retry')
  assert.deepEqual(failures[1], {
    attempt: 2, failure_code: 'insufficient_funds', reason: 'Your card has insufficient funds.', idempotency_key: 'dunning:1', next_retry_at: '2026-09-16 10:00:00+00',
  })
  const env = (await t.api.get(`/v1/invoices/${id}`)).body.environment_id
  assert.equal(await runPaymentRetry(p.ctx, { tenant_id: t.tenantId, environment_id: env, invoice_id: id, attempt: 2 }), 'paid')
  const inv = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.deepEqual([inv.payment_status, inv.amount_paid, inv.amount_remaining], ['SUCCEEDED', '25.00', '0.00'])
  const payments = await sql(p, `SELECT amount::text AS amount, reference, idempotency_key FROM invoice_payments WHERE invoice_id = ?`, [id])
  assert.deepEqual(payments, [{ amount: '25.00', reference: `stripe:${stripeInvoice}`, idempotency_key: 'dunning:2:paid' }])
  assert.deepEqual(stripe.calls('POST', `/v1/invoices/${stripeInvoice}/pay`).map((r) => r.idempotencyKey), [`meterline-dunning-${id}-1`, `meterline-dunning-${id}-2`])
})

test('payment link: a Stripe Checkout Session for what is left to pay, stored on the invoice', async () => {
  const t = await stripeTenant()
  const { id } = await finalizedInvoice(t)
  await t.api.post(`/v1/invoices/${id}/payments`, { amount: '5.00' })
  const inv0 = (await t.api.get(`/v1/invoices/${id}`)).body
  const res = await t.api.post(`/v1/invoices/${id}/payment_link`, { success_url: 'https://example.com/paid', cancel_url: 'https://example.com/cancel' })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  // 25.00 - 5.00 paid = 20.00 -> 2000 cents
  assert.deepEqual([res.body.mode, res.body.amount, res.body.currency, res.body.provider], ['payment', '20.00', 'USD', 'stripe'])
  assert.ok(res.body.url.startsWith(`${stripe.url}/checkout/`), res.body.url)
  const [session] = stripe.calls('POST', '/v1/checkout/sessions')
  // The customer was pushed to Stripe first; the session is for that Stripe customer.
  assert.equal(stripe.customers.get(session.body.customer)?.metadata.meterline_customer_id, inv0.customer_id)
  assert.equal(session.body.mode, 'payment')
  assert.equal(session.body.line_items['0'].price_data.unit_amount, '2000')
  assert.equal(session.body.line_items['0'].price_data.currency, 'usd')
  assert.equal(session.body.metadata.meterline_invoice_id, id)
  assert.equal(session.body.success_url, 'https://example.com/paid')
  const inv = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.equal(inv.metadata.checkout_url, res.body.url)
  assert.equal(inv.metadata.checkout_session_id, res.body.provider_session_id)
  // The same amount again: Stripe answers the same session (idempotency key).
  assert.equal((await t.api.post(`/v1/invoices/${id}/payment_link`, { success_url: 'https://example.com/paid' })).body.provider_session_id, res.body.provider_session_id)

  await t.api.post(`/v1/invoices/${id}/payments`, { amount: '20.00' })
  assertError(await t.api.post(`/v1/invoices/${id}/payment_link`, { success_url: 'https://example.com/paid' }), 400, 'invalid_operation', /SUCCEEDED/)
  const { t: plain, id: unlinked } = await finalizedInvoice()
  assertError(await plain.api.post(`/v1/invoices/${unlinked}/payment_link`, { success_url: 'https://example.com/paid' }), 400, 'invalid_operation', /no active stripe connection/)
  assertError(await plain.api.post(`/v1/invoices/${unlinked}/payment_link`, { success_url: 'not a url' }), 400, 'validation_error')
})

test('inbound: a paid checkout session records its payment once; invoice.payment_failed starts dunning once', async () => {
  const t = await stripeTenant()
  const { id } = await finalizedInvoice(t)
  await t.api.post(`/v1/invoices/${id}/payments`, { amount: '5.00' })
  const link = (await t.api.post(`/v1/invoices/${id}/payment_link`, { success_url: 'https://example.com/paid' })).body
  const session = { id: link.provider_session_id, object: 'checkout.session', mode: 'payment', payment_status: 'paid', amount_total: 2000, metadata: { meterline_invoice_id: id } }
  const first = await deliver(t, 'evt_cs_1', 'checkout.session.completed', session)
  assert.equal(first.status, 200, JSON.stringify(first.body))
  assert.equal(first.body.outcome, `invoice ${id}: payment of session ${link.provider_session_id} recorded`)
  // Stripe may send the same completion under another event id: nothing more is recorded.
  const again = await deliver(t, 'evt_cs_2', 'checkout.session.completed', session)
  assert.match(again.body.outcome, /already recorded/)
  const inv = (await t.api.get(`/v1/invoices/${id}`)).body
  // 5.00 + 2000 cents = 25.00
  assert.deepEqual([inv.amount_paid, inv.amount_remaining, inv.payment_status], ['25.00', '0.00', 'SUCCEEDED'])
  assert.match((await deliver(t, 'evt_cs_3', 'checkout.session.completed', { ...session, id: 'cs_setup', mode: 'setup' })).body.outcome, /not a payment session/)

  const { id: other } = await finalizedInvoice(t)
  const failed = { id: 'in_not_linked', object: 'invoice', metadata: { meterline_invoice_id: other }, last_payment_error: { code: 'expired_card' } }
  const f1 = await deliver(t, 'evt_pf_1', 'invoice.payment_failed', failed)
  assert.equal(f1.body.outcome, `invoice ${other}: failure 1 recorded`)
  const f2 = await deliver(t, 'evt_pf_2', 'invoice.payment_failed', failed)
  assert.match(f2.body.outcome, /FAILED already/)
  const rows = await sql(p, `SELECT attempt, failure_code, idempotency_key FROM invoice_payment_failures WHERE invoice_id = ?`, [other])
  assert.deepEqual(rows, [{ attempt: 1, failure_code: 'expired_card', idempotency_key: 'stripe:evt_pf_1' }])
  assert.equal((await t.api.get(`/v1/invoices/${other}`)).body.payment_status, 'FAILED')
})

test('payment link for a trial-start invoice: a setup session that saves a card replaces the placeholder', async () => {
  const t = await stripeTenant()
  await created(t.api.post('/v1/customers', { external_id: 'trialist' }))
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', amount: '20', currency: 'EUR', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', trial_period_days: 14 }],
  }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'trialist', plan_id: plan.id, currency: 'EUR' }))
  const [trial] = await sql(p, `SELECT id, metadata FROM invoices WHERE subscription_id = ?`, [sub.id])
  assert.match(trial.metadata.checkout_url, /checkout\.meterline\.invalid/)
  const res = await t.api.post(`/v1/invoices/${trial.id}/payment_link`, { success_url: 'https://example.com/card-saved' })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.deepEqual([res.body.mode, res.body.amount, res.body.currency], ['setup', '0', 'EUR'])
  const session = stripe.calls('POST', '/v1/checkout/sessions').find((c) => c.body.metadata?.meterline_invoice_id === trial.id)
  assert.deepEqual([session?.body.mode, session?.body.currency, session?.body.line_items], ['setup', 'eur', undefined])
  const [stored] = await sql(p, `SELECT metadata FROM invoices WHERE id = ?`, [trial.id])
  assert.equal(stored.metadata.checkout_url, res.body.url)
})
