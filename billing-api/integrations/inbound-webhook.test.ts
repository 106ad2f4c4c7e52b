// POST /webhooks/stripe/{tenant_id}/{env_id}: Stripe's signature scheme, nothing changed on a
// bad signature, exactly-once on redelivery, invoice.paid, payment_intent.succeeded,
// subscription activation, snake and camel case payloads, and 500 on a handler failure.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import Stripe from 'stripe'
import { ManualClock } from '../../platform/clock.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { eventually, startTestPlatform, type TestPlatform } from '../../test/support/platform.js'
import { StripeStandIn } from '../../test/support/stripe-stand-in.js'
import { billedInvoices, sql } from '../../test/support/invoices.js'
import { backgroundFailures } from '../../platform/metrics.js'
import { createQueueRedis } from '../../platform/redis.js'
import { freePort } from '../../test/support/private-services.js'
import { createIntegrationQueue } from './queue.js'

const WEBHOOK_SECRET = 'whsec_inbound0123456789abcdefghijkl'
const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
const signer = new Stripe('sk_test_signer')
let p: TestPlatform
let stripe: StripeStandIn

before(async () => {
  stripe = await new StripeStandIn().start()
  p = await startTestPlatform({
    services: ['billing-api', 'scheduler'], clock,
    config: { integrations: { encryptionKey: Buffer.alloc(32, 9), stripeApiBase: stripe.url, rateLimitPerSecond: 50 } },
  })
})
after(async () => {
  await p?.stop()
  await stripe?.stop()
})

async function stripeTenant() {
  const t = await p.newTenant()
  await created(t.api.post('/v1/integrations/connections', { provider: 'stripe', name: 'Stripe', credentials: { api_key: 'sk_test_inbound_0000000000', webhook_secret: WEBHOOK_SECRET } }))
  return { ...t, path: `/webhooks/stripe/${t.tenantId}/${t.environments.production}` }
}

type T = Awaited<ReturnType<typeof stripeTenant>>

function stripeEvent(id: string, type: string, object: Record<string, unknown>): string {
  return JSON.stringify({ id, object: 'event', type, created: Math.floor(NOW.getTime() / 1000), data: { object } })
}

function send(t: T, payload: string, opts: { secret?: string; timestamp?: number; signature?: string | null } = {}) {
  const headers: Record<string, string> = {}
  if (opts.signature !== null) {
    headers['stripe-signature'] = opts.signature ?? signer.webhooks.generateTestHeaderString({
      payload, secret: opts.secret ?? WEBHOOK_SECRET, timestamp: opts.timestamp ?? Math.floor(clock.now().getTime() / 1000),
    })
  }
  return p.client().request('POST', t.path, payload, headers)
}

async function finalized(t: T) {
  const { invoiceIds: [id], sub, customer } = await billedInvoices(p, t)
  assert.equal((await t.api.post(`/v1/invoices/${id}/finalize`, {})).status, 200)
  return { id, sub, customer }
}

const invoiceState = async (id: string) => (await sql(p, `SELECT payment_status, amount_paid::text AS paid, version FROM invoices WHERE id = ?`, [id]))[0]

test('a missing or bad signature answers 401 and changes nothing', async () => {
  const t = await stripeTenant()
  const { id } = await finalized(t)
  await created(t.api.post('/v1/integrations/link', { entity_type: 'invoice', entity_id: id, provider: 'stripe', provider_entity_id: 'in_sig' }))
  const before = await invoiceState(id)
  const payload = stripeEvent('evt_sig', 'invoice.paid', { id: 'in_sig', object: 'invoice', status: 'paid' })
  assertError(await send(t, payload, { signature: null }), 401, 'permission_denied', /missing Stripe-Signature/)
  assertError(await send(t, payload, { secret: 'whsec_someone_else' }), 401, 'permission_denied', /does not verify/)
  assertError(await send(t, payload, { signature: 't=1,v1=deadbeef' }), 401, 'permission_denied')
  assertError(await send(t, payload, { timestamp: Math.floor(NOW.getTime() / 1000) - 3600 }), 401, 'permission_denied', /tolerance/)
  const signedOther = signer.webhooks.generateTestHeaderString({ payload, secret: WEBHOOK_SECRET, timestamp: Math.floor(NOW.getTime() / 1000) })
  assertError(await send(t, payload.replace('in_sig', 'in_sih'), { signature: signedOther }), 401, 'permission_denied', /does not verify/)
  assert.deepEqual(await invoiceState(id), before)
  assert.equal(await countRows(p, 'integration_webhook_events', t.tenantId), 0)
  assert.equal(await countRows(p, 'invoice_payments', t.tenantId), 0)

  const other = await p.newTenant()
  assertError(await p.client().request('POST', `/webhooks/stripe/${other.tenantId}/${other.environments.production}`, payload, {}), 404, 'not_found')
  assertError(await p.client().request('POST', `/webhooks/paypal/${t.tenantId}/${t.environments.production}`, payload, {}), 400, 'validation_error')
})

test('invoice.paid marks the linked invoice paid exactly once, however often it is delivered', async () => {
  const t = await stripeTenant()
  const { id } = await finalized(t)
  await created(t.api.post('/v1/integrations/link', { entity_type: 'invoice', entity_id: id, provider: 'stripe', provider_entity_id: 'in_paid1' }))
  const payload = stripeEvent('evt_paid1', 'invoice.paid', { id: 'in_paid1', object: 'invoice', status: 'paid', amount_paid: 2500 })
  const first = await send(t, payload)
  assert.equal(first.status, 200, JSON.stringify(first.body))
  assert.deepEqual(first.body, { received: true, event_id: 'evt_paid1', event_type: 'invoice.paid', duplicate: false, outcome: `invoice ${id} marked paid` })
  const again = await send(t, payload)
  assert.equal(again.status, 200)
  assert.equal(again.body.duplicate, true)
  // a different event about the same paid invoice also pays nothing more
  const other = await send(t, stripeEvent('evt_paid1b', 'invoice.paid', { id: 'in_paid1', object: 'invoice' }))
  assert.equal(other.body.outcome, `invoice ${id} already paid`)
  // version: 1 created, 2 finalized, 3 the one payment
  assert.deepEqual(await invoiceState(id), { payment_status: 'SUCCEEDED', paid: '25.00', version: 3 })
  assert.deepEqual(await sql(p, `SELECT amount::text AS amount, reference, idempotency_key FROM invoice_payments WHERE invoice_id = ?`, [id]), [
    { amount: '25.00', reference: 'stripe:in_paid1', idempotency_key: 'stripe:in_paid1:paid' },
  ])

  // concurrent redeliveries of one event: one applies, the others are duplicates
  const second = await finalized(t)
  await created(t.api.post('/v1/integrations/link', { entity_type: 'invoice', entity_id: second.id, provider: 'stripe', provider_entity_id: 'in_paid2' }))
  const burst = stripeEvent('evt_paid2', 'invoice.paid', { id: 'in_paid2', object: 'invoice' })
  const results = await Promise.all([send(t, burst), send(t, burst), send(t, burst)])
  assert.deepEqual(results.map((r) => r.status), [200, 200, 200])
  assert.equal(results.filter((r) => !r.body.duplicate).length, 1)
  assert.equal((await sql(p, `SELECT count(*)::int AS n FROM invoice_payments WHERE invoice_id = ?`, [second.id]))[0].n, 1)
  assert.equal(await countRows(p, 'integration_webhook_events', t.tenantId), 3)
})

test('camelCase payloads: an unlinked Stripe invoice is found by metadata.meterlineInvoiceId', async () => {
  const t = await stripeTenant()
  const { id } = await finalized(t)
  const res = await send(t, stripeEvent('evt_camel', 'invoice.paid', { id: 'in_camel', amountPaid: 2500, metadata: { meterlineInvoiceId: id } }))
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.outcome, `invoice ${id} marked paid`)
  assert.equal((await invoiceState(id)).payment_status, 'SUCCEEDED')
  const unknown = await send(t, stripeEvent('evt_nobody', 'invoice.paid', { id: 'in_nobody' }))
  assert.equal(unknown.body.outcome, 'ignored: no linked invoice')
})

test('a handler failure answers 500, records nothing, and the retry succeeds once it can', async () => {
  const t = await stripeTenant()
  const { invoiceIds: [draftId] } = await billedInvoices(p, t)
  await created(t.api.post('/v1/integrations/link', { entity_type: 'invoice', entity_id: draftId, provider: 'stripe', provider_entity_id: 'in_early' }))
  const payload = stripeEvent('evt_early', 'invoice.paid', { id: 'in_early' })
  assertError(await send(t, payload), 500, 'internal_error', /evt_early.*DRAFT/)
  assert.equal(await countRows(p, 'integration_webhook_events', t.tenantId), 0, 'not marked processed')
  assert.equal(await countRows(p, 'invoice_payments', t.tenantId), 0)

  assert.equal((await t.api.post(`/v1/invoices/${draftId}/finalize`, {})).status, 200)
  const retried = await send(t, payload)
  assert.equal(retried.status, 200, JSON.stringify(retried.body))
  assert.equal(retried.body.outcome, `invoice ${draftId} marked paid`)
  assert.equal((await invoiceState(draftId)).payment_status, 'SUCCEEDED')
})

test('payment_intent.succeeded stores the customer-to-member mapping for automatic charging', async () => {
  const t = await stripeTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: 'payer' }))
  await created(t.api.post('/v1/integrations/link', { entity_type: 'customer', entity_id: customer.id, provider: 'stripe', provider_entity_id: 'cus_payer' }))
  const res = await send(t, stripeEvent('evt_pi1', 'payment_intent.succeeded', { id: 'pi_1', object: 'payment_intent', customer: 'cus_payer', payment_method: 'pm_card_1', amount: 2500 }))
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.outcome, `payment member stored for customer ${customer.id}`)
  // a later payment (camelCase, generic event name) without a method keeps the stored one
  await send(t, stripeEvent('evt_pi2', 'payment.succeeded', { id: 'pi_2', customer: 'cus_payer' }))
  assert.deepEqual(
    await sql(p, `SELECT customer_id, provider, provider_customer_id, payment_method_id, last_payment_id FROM integration_payment_members WHERE tenant_id = ?`, [t.tenantId]),
    [{ customer_id: customer.id, provider: 'stripe', provider_customer_id: 'cus_payer', payment_method_id: 'pm_card_1', last_payment_id: 'pi_2' }],
  )
})

test('subscription activation makes an incomplete subscription active, once', async () => {
  const t = await stripeTenant()
  await created(t.api.post('/v1/customers', { external_id: 'sub-c' }))
  const plan = await created(t.api.post('/v1/plans', { name: 'p', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '9', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }] }))
  const newSub = () => created(t.api.post('/v1/subscriptions', { external_customer_id: 'sub-c', plan_id: plan.id, currency: 'USD', payment_behavior: 'default_incomplete' }))
  const linked = await newSub()
  const byMetadata = await newSub()
  assert.equal(linked.subscription_status, 'INCOMPLETE')
  await created(t.api.post('/v1/integrations/link', { entity_type: 'subscription', entity_id: linked.id, provider: 'stripe', provider_entity_id: 'sub_stripe1' }))

  const notYet = await send(t, stripeEvent('evt_s0', 'customer.subscription.updated', { id: 'sub_stripe1', object: 'subscription', status: 'incomplete' }))
  assert.equal(notYet.body.outcome, 'ignored: subscription not active')
  const res = await send(t, stripeEvent('evt_s1', 'customer.subscription.updated', { id: 'sub_stripe1', object: 'subscription', status: 'active' }))
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.match(res.body.outcome, new RegExp(`subscription ${linked.id} activated`))
  assert.equal((await t.api.get(`/v1/subscriptions/${linked.id}`)).body.subscription_status, 'ACTIVE')
  assert.equal((await send(t, stripeEvent('evt_s1', 'customer.subscription.updated', { id: 'sub_stripe1', status: 'active' }))).body.duplicate, true)
  assert.equal((await send(t, stripeEvent('evt_s1b', 'subscription.activated', { id: 'sub_stripe1' }))).body.outcome, `subscription ${linked.id} already active`)

  const camel = await send(t, stripeEvent('evt_s2', 'subscription.activated', { id: 'sub_unlinked', metadata: { meterlineSubscriptionId: byMetadata.id } }))
  assert.match(camel.body.outcome, /activated/)
  assert.equal((await t.api.get(`/v1/subscriptions/${byMetadata.id}`)).body.subscription_status, 'ACTIVE')
  const events = await sql(p, `SELECT count(*)::int AS n FROM system_events_outbox WHERE entity_id = ? AND event_name = 'subscription.activated'`, [linked.id])
  assert.equal(events[0].n, 1)
})

test("activation queues a push of the subscription's FINALIZED unpaid invoices", async () => {
  const t = await stripeTenant()
  const { id, sub } = await finalized(t)
  // Setup by SQL: the create path never bills an INCOMPLETE subscription, so this stands for
  // one whose invoice was finalized while the provider still held the payment back.
  await sql(p, `UPDATE subscriptions SET subscription_status = 'INCOMPLETE' WHERE id = ?`, [sub.id])
  const res = await send(t, stripeEvent('evt_resync', 'subscription.activated', { id: 'sub_resync', metadata: { meterline_subscription_id: sub.id } }))
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.outcome, `subscription ${sub.id} activated; 1 pending invoice(s) queued for resync`)
  // The push creates the Stripe invoice, then finalizes it: wait for the second step too.
  const pushed = await eventually(async () => [...stripe.invoices.values()].find((i) => i.metadata.meterline_invoice_id === id && i.status !== 'draft'), 'the finalized invoice at Stripe')
  assert.equal(pushed.status, 'open')
})

test('a resync that cannot be enqueued (Redis unreachable) is retried, logged and counted; the applied event still answers 200', async () => {
  const t = await stripeTenant()
  const { sub } = await finalized(t)
  await sql(p, `UPDATE subscriptions SET subscription_status = 'INCOMPLETE' WHERE id = ?`, [sub.id])
  // A real queue on a Redis port nothing listens on: every enqueue fails at once.
  const deadRedis = createQueueRedis(`redis://127.0.0.1:${await freePort()}`, 500)
  const working = p.ctx.integrations
  p.ctx.integrations = createIntegrationQueue(deadRedis, p.config.redisPrefix)
  const failures = async () => (await backgroundFailures.get()).values.find((v) => v.labels.operation === 'integration_resync_enqueue')?.value ?? 0
  const before = await failures()
  try {
    const started = Date.now()
    const res = await send(t, stripeEvent('evt_resync_down', 'subscription.activated', { id: 'sub_resync_down', metadata: { meterline_subscription_id: sub.id } }))
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.match(res.body.outcome, /activated/)
    assert.ok(Date.now() - started >= 600, 'three attempts with backoff (200 + 400 ms) before giving up')
    assert.equal(await failures(), before + 1)
    assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.subscription_status, 'ACTIVE')
  } finally {
    await p.ctx.integrations.close().catch(() => undefined) // closing a never-connected queue may reject; nothing is left open either way
    deadRedis.disconnect()
    p.ctx.integrations = working
  }
})

test('generic_http webhooks are verified by their HMAC header and handled like Stripe\'s', async () => {
  const t = await p.newTenant()
  await created(t.api.post('/v1/integrations/connections', { provider: 'generic_http', name: 'ERP', credentials: { api_key: 'k', webhook_secret: 'erp-secret' }, settings: { base_url: 'http://127.0.0.1:9/' } }))
  const { id } = await finalized({ ...t, path: '' })
  await created(t.api.post('/v1/integrations/link', { entity_type: 'invoice', entity_id: id, provider: 'generic_http', provider_entity_id: 'erp-inv-1' }))
  const path = `/webhooks/generic_http/${t.tenantId}/${t.environments.production}`
  const payload = JSON.stringify({ id: 'erp-evt-1', type: 'invoice.paid', data: { object: { id: 'erp-inv-1' } } })
  const sign = (secret: string) => ({ 'x-signature': `sha256=${createHmac('sha256', secret).update(payload).digest('hex')}`, 'content-type': 'application/json' })
  assertError(await p.client().request('POST', path, payload, sign('wrong')), 401, 'permission_denied')
  assert.equal((await invoiceState(id)).payment_status, 'PENDING')
  const ok = await p.client().request('POST', path, payload, sign('erp-secret'))
  assert.equal(ok.status, 200, JSON.stringify(ok.body))
  assert.equal(ok.body.outcome, `invoice ${id} marked paid`)
  assert.deepEqual(await sql(p, `SELECT reference FROM invoice_payments WHERE invoice_id = ?`, [id]), [{ reference: 'generic_http:erp-inv-1' }])
})
