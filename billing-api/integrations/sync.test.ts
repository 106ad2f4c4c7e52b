// Connections (credentials encrypted at rest), links, push and pull syncs against the Stripe
// stand-in (test/support/stripe-stand-in.ts, a local server in place of Stripe's API), the
// unsupported pull of generic_http, and the customer.created -> sync job path via the relay.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import type { Producer } from 'kafkajs'
import { ManualClock } from '../../platform/clock.js'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { createRedis } from '../../platform/redis.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { eventually, startTestPlatform, type TestPlatform } from '../../test/support/platform.js'
import { StripeStandIn } from '../../test/support/stripe-stand-in.js'
import { relaySystemEvents } from '../outbox/relay.js'
import { billedInvoices, sql } from '../../test/support/invoices.js'
import { decryptJson } from '../../platform/secrets-at-rest.js'
import { INTEGRATION_QUEUE } from './queue.js'
import { TenantRateLimiter } from './rate-limit.js'

const API_KEY = 'sk_test_51AbCdEfGhIjKlMnOpQrStUvWxYz0123456789'
const WEBHOOK_SECRET = 'whsec_0123456789abcdefghijklmnopqrstuv'
const clock = new ManualClock(new Date('2026-09-15T10:00:00Z'))
let p: TestPlatform
let stripe: StripeStandIn
let producer: Producer
let redis: Redis
let queue: Queue

before(async () => {
  stripe = await new StripeStandIn().start()
  p = await startTestPlatform({ services: ['billing-api', 'scheduler'], clock, config: { integrations: { ...testIntegrationConfig(), stripeApiBase: stripe.url } } })
  producer = await createProducer(createKafka(p.config, 'integrations-test'))
  redis = createRedis(p.config.redisUrl)
  queue = new Queue(INTEGRATION_QUEUE, { connection: redis, prefix: p.config.redisPrefix })
})
after(async () => {
  await queue?.close()
  await redis?.quit()
  await producer?.disconnect()
  await p?.stop()
  await stripe?.stop()
})

function testIntegrationConfig() {
  return { encryptionKey: Buffer.alloc(32, 7), rateLimitPerSecond: 50 }
}

async function stripeTenant() {
  const t = await p.newTenant()
  const conn = await created(t.api.post('/v1/integrations/connections', { provider: 'stripe', name: 'Stripe', credentials: { api_key: API_KEY, webhook_secret: WEBHOOK_SECRET } }))
  return { t, conn }
}

async function finalizedInvoice(t: Awaited<ReturnType<typeof stripeTenant>>['t']) {
  const { invoiceIds: [id], customer, sub } = await billedInvoices(p, t)
  const res = await t.api.post(`/v1/invoices/${id}/finalize`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return { id, customer, sub }
}

test('credentials are encrypted at rest and never returned; one connection per provider', async () => {
  const { t, conn } = await stripeTenant()
  assert.match(conn.id, /^intconn_/)
  assert.deepEqual(conn.credentials, { api_key: 'sk_test_****6789', webhook_secret: 'whsec_****stuv' })
  const listed = await t.api.get('/v1/integrations/connections')
  assert.equal(listed.status, 200)
  assert.equal(listed.body.items.length, 1)
  for (const body of [listed.body, (await t.api.get(`/v1/integrations/connections/${conn.id}`)).body]) {
    assert.ok(!JSON.stringify(body).includes(API_KEY) && !JSON.stringify(body).includes(WEBHOOK_SECRET))
  }
  const [row] = await sql(p, `SELECT to_jsonb(c)::text AS raw, credentials_encrypted FROM integration_connections c WHERE id = ?`, [conn.id])
  assert.ok(!row.raw.includes(API_KEY), 'the api key is not in the row')
  assert.ok(!row.raw.includes(WEBHOOK_SECRET), 'the webhook secret is not in the row')
  assert.ok(!row.raw.includes(API_KEY.slice(8, 30)), 'no fragment of the key either')
  assert.match(row.credentials_encrypted, /^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
  const aad = `integration_connections/${t.tenantId}/${t.environments.production}/${conn.id}`
  assert.deepEqual(decryptJson(p.config.integrations.encryptionKey, aad, row.credentials_encrypted), { api_key: API_KEY, webhook_secret: WEBHOOK_SECRET })
  assert.throws(() => decryptJson(p.config.integrations.encryptionKey, aad.replace(conn.id, 'intconn_other'), row.credentials_encrypted), 'bound to its row')

  assertError(await t.api.post('/v1/integrations/connections', { provider: 'stripe', name: 'again', credentials: { api_key: 'x', webhook_secret: 'y' } }), 409, 'already_exists')
  assertError(await t.api.post('/v1/integrations/connections', { provider: 'generic_http', name: 'h', credentials: { api_key: 'x', webhook_secret: 'y' } }), 400, 'validation_error', /base_url/)
  assertError(await t.api.post('/v1/integrations/connections', { provider: 'paypal', name: 'h', credentials: { api_key: 'x', webhook_secret: 'y' } }), 400, 'validation_error')
  assert.equal(await countRows(p, 'integration_connections', t.tenantId), 1)

  assert.equal((await t.api.delete(`/v1/integrations/connections/${conn.id}`)).status, 204)
  assertError(await t.api.get(`/v1/integrations/connections/${conn.id}`), 404, 'not_found')
  const other = await p.newTenant()
  assertError(await other.api.delete(`/v1/integrations/connections/${conn.id}`), 404, 'not_found')
})

test('link records the mapping; customer links show on the customer', async () => {
  const { t } = await stripeTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const link = await created(t.api.post('/v1/integrations/link', { entity_type: 'customer', entity_id: customer.id, provider: 'stripe', provider_entity_id: 'cus_existing1' }))
  assert.equal(link.entity_type, 'customer')
  assert.equal(link.entity_id, customer.id)
  assert.equal(link.provider_type, 'stripe')
  assert.equal(link.provider_entity_id, 'cus_existing1')
  const shown = (await t.api.get(`/v1/customers/${customer.id}`)).body.integrations
  assert.deepEqual(shown.map((i: any) => [i.provider_type, i.provider_entity_id]), [['stripe', 'cus_existing1']])

  const relinked = await created(t.api.post('/v1/integrations/link', { entity_type: 'customer', entity_id: customer.id, provider: 'stripe', provider_entity_id: 'cus_existing2' }))
  assert.equal(relinked.id, link.id, 're-linking re-points the same mapping')
  const second = await created(t.api.post('/v1/customers', { external_id: 'beta' }))
  assertError(await t.api.post('/v1/integrations/link', { entity_type: 'customer', entity_id: second.id, provider: 'stripe', provider_entity_id: 'cus_existing2' }), 409, 'already_exists')
  assertError(await t.api.post('/v1/integrations/link', { entity_type: 'invoice', entity_id: 'inv_nope', provider: 'stripe', provider_entity_id: 'in_1' }), 400, 'validation_error', /entity_id/)
  assert.equal(await countRows(p, 'entity_integration_mappings', t.tenantId), 1)
  assert.equal(stripe.calls('POST', /cus_existing/).length, 0, 'linking calls no provider')
})

test('push sync creates the customer and the invoice at Stripe with the right payload', async () => {
  const { t } = await stripeTenant()
  const { id, customer } = await finalizedInvoice(t)
  const before = stripe.requests.length
  const res = await t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: id, provider: 'stripe', method: 'push' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.outcome, 'created')
  assert.match(res.body.provider_entity_id, /^in_standin/)
  const calls = stripe.requests.slice(before)
  assert.deepEqual(calls.map((c) => `${c.method} ${c.path}`), [
    'POST /v1/customers', 'POST /v1/invoices', 'POST /v1/invoiceitems', `POST /v1/invoices/${res.body.provider_entity_id}/finalize`,
  ])
  assert.ok(calls.every((c) => c.authorization === `Bearer ${API_KEY}`))
  const [cust, inv, item] = calls
  assert.deepEqual(cust.body.metadata, { meterline_customer_id: customer.id, external_id: customer.external_id })
  assert.equal(cust.idempotencyKey, `meterline-customer-${customer.id}`)
  const stripeCustomer = [...stripe.customers.values()].find((c) => c.metadata.meterline_customer_id === customer.id)!
  assert.equal(inv.body.customer, stripeCustomer.id)
  assert.equal(inv.body.currency, 'usd')
  assert.equal(inv.body.collection_method, 'charge_automatically')
  assert.equal(inv.body.auto_advance, 'false')
  assert.equal(inv.body.metadata.meterline_invoice_id, id)
  assert.equal(inv.idempotencyKey, `meterline-invoice-${id}`)
  // 25.00 USD -> 2500 cents
  assert.equal(item.body.amount, '2500')
  assert.equal(item.body.currency, 'usd')
  assert.equal(item.body.invoice, res.body.provider_entity_id)
  assert.equal(stripe.invoices.get(res.body.provider_entity_id)!.status, 'open')

  const again = await t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: id, provider: 'stripe', method: 'push' })
  assert.equal(again.body.outcome, 'already_synced')
  assert.equal(stripe.requests.length, before + 4, 'a synced invoice is not pushed twice')
  const upd = await t.api.post('/v1/integrations/sync', { entity_type: 'customer', entity_id: customer.id, provider: 'stripe', method: 'push' })
  assert.equal(upd.body.outcome, 'updated')
  assert.equal(upd.body.provider_entity_id, stripeCustomer.id)
  assert.deepEqual(stripe.requests.slice(-1).map((c) => `${c.method} ${c.path}`), [`POST /v1/customers/${stripeCustomer.id}`])
  assert.deepEqual((await sql(p, `SELECT entity_type FROM entity_integration_mappings WHERE tenant_id = ? ORDER BY entity_type`, [t.tenantId])).map((r) => r.entity_type), ['customer', 'invoice'])

  const draftTenant = await stripeTenant()
  const { invoiceIds: [draftId] } = await billedInvoices(p, draftTenant.t)
  const n = stripe.requests.length
  assertError(await draftTenant.t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: draftId, provider: 'stripe', method: 'push' }), 400, 'invalid_operation', /DRAFT/)
  assert.equal(stripe.requests.length, n)
})

test('a provider outage answers 503 service_unavailable and links nothing', async () => {
  const { t } = await stripeTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: 'down' }))
  stripe.failNext = 1
  assertError(await t.api.post('/v1/integrations/sync', { entity_type: 'customer', entity_id: customer.id, provider: 'stripe', method: 'push' }), 503, 'service_unavailable', /stripe request failed/)
  assert.equal(await countRows(p, 'entity_integration_mappings', t.tenantId), 0)
})

test('pull on Stripe applies the provider state: a paid Stripe invoice marks ours paid, once', async () => {
  const { t } = await stripeTenant()
  const { id } = await finalizedInvoice(t)
  const pushed = await t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: id, provider: 'stripe', method: 'push' })
  const stripeId = pushed.body.provider_entity_id

  const open = await t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: id, provider: 'stripe', method: 'pull' })
  assert.equal(open.status, 200, JSON.stringify(open.body))
  assert.deepEqual([open.body.outcome, open.body.provider_status], ['no_change', 'open'])
  assert.equal((await t.api.get(`/v1/invoices/${id}`)).body.payment_status, 'PENDING')
  assert.deepEqual(stripe.requests.slice(-1).map((c) => `${c.method} ${c.path}`), [`GET /v1/invoices/${stripeId}`])

  stripe.setInvoiceStatus(stripeId, 'paid')
  const paid = await t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: id, provider: 'stripe', method: 'pull' })
  assert.deepEqual([paid.body.outcome, paid.body.provider_status], ['marked_paid', 'paid'])
  const again = await t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: id, provider: 'stripe', method: 'pull' })
  assert.equal(again.body.outcome, 'no_change')
  const inv = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.deepEqual([inv.payment_status, inv.amount_paid, inv.amount_remaining], ['SUCCEEDED', '25.00', '0.00'])
  assert.deepEqual(await sql(p, `SELECT amount::text AS amount, reference FROM invoice_payments WHERE invoice_id = ?`, [id]), [{ amount: '25.00', reference: `stripe:${stripeId}` }])

  const unlinked = await finalizedInvoice(t)
  assertError(await t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: unlinked.id, provider: 'stripe', method: 'pull' }), 400, 'invalid_operation', /not linked/)
})

test('pull on a provider without pull answers the unsupported error and changes nothing', async () => {
  const t = await p.newTenant()
  await created(t.api.post('/v1/integrations/connections', { provider: 'generic_http', name: 'ERP', credentials: { api_key: 'k', webhook_secret: 's' }, settings: { base_url: 'http://127.0.0.1:9/' } }))
  const { id } = await finalizedInvoice(t)
  await created(t.api.post('/v1/integrations/link', { entity_type: 'invoice', entity_id: id, provider: 'generic_http', provider_entity_id: 'erp-1' }))
  const before = await sql(p, `SELECT version, payment_status FROM invoices WHERE id = ?`, [id])
  assertError(await t.api.post('/v1/integrations/sync', { entity_type: 'invoice', entity_id: id, provider: 'generic_http', method: 'pull' }), 400, 'invalid_operation', /generic_http does not support pull/)
  assert.deepEqual(await sql(p, `SELECT version, payment_status FROM invoices WHERE id = ?`, [id]), before)
  assert.equal(await countRows(p, 'invoice_payments', t.tenantId), 0)
})

test('customer.created reaches Stripe through the relay and a sync job; no connection, no job', async () => {
  const { t } = await stripeTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: 'relayed', name: 'Relayed Inc', email: 'billing@relayed.test' }))
  const relay = (tenantId: string) => relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId, integrations: p.ctx.integrations })
  assert.equal(await relay(t.tenantId), 1)
  const call = await eventually(async () => stripe.calls('POST', '/v1/customers').find((c) => c.body.metadata?.meterline_customer_id === customer.id), 'the customer at Stripe')
  assert.equal(call.body.name, 'Relayed Inc')
  assert.equal(call.body.email, 'billing@relayed.test')
  const mapping = await eventually(async () => (await sql(p, `SELECT provider_entity_id FROM entity_integration_mappings WHERE entity_id = ?`, [customer.id]))[0], 'the mapping')
  assert.match(mapping.provider_entity_id, /^cus_standin/)

  const jobOf = async (customerId: string) => {
    const [evt] = await sql(p, `SELECT id FROM system_events_outbox WHERE entity_id = ? AND event_name = 'customer.created'`, [customerId])
    return queue.getJob(`${evt.id}__stripe__customer__${customerId}`)
  }
  assert.ok(await jobOf(customer.id), 'the job is keyed by the event, so a re-relay does not add another')

  const bare = await p.newTenant()
  const lonely = await created(bare.api.post('/v1/customers', { external_id: 'lonely' }))
  assert.equal(await relay(bare.tenantId), 1)
  assert.equal(await jobOf(lonely.id), undefined, 'no connection, no sync job')
})

test('invoice.finalized reaches Stripe through the relay: the customer once, then the invoice', async () => {
  const { t } = await stripeTenant()
  const { id, customer } = await finalizedInvoice(t)
  await relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId: t.tenantId, integrations: p.ctx.integrations })
  const stripeId = await eventually(async () => (await sql(p, `SELECT provider_entity_id FROM entity_integration_mappings WHERE entity_id = ?`, [id]))[0]?.provider_entity_id, 'the invoice mapping')
  const inv = stripe.invoices.get(stripeId)!
  assert.equal(inv.metadata.meterline_invoice_id, id)
  assert.equal(inv.status, 'open')
  assert.deepEqual([...stripe.invoiceItems.values()].filter((i) => i.invoice === stripeId).map((i) => i.amount), [2500])
  // customer.created and invoice.finalized both need the customer: one Stripe customer, one link
  assert.equal([...stripe.customers.values()].filter((c) => c.metadata.meterline_customer_id === customer.id).length, 1)
  assert.equal((await sql(p, `SELECT count(*)::int AS n FROM entity_integration_mappings WHERE entity_id = ?`, [customer.id]))[0].n, 1)
})

test('the per-tenant token bucket grants `rate` jobs at once, then asks to wait', async () => {
  const limiter = new TenantRateLimiter(redis, p.config.redisPrefix)
  const tenant = `t-${Date.now()}`
  assert.equal(await limiter.take(tenant, 2), 0)
  assert.equal(await limiter.take(tenant, 2), 0)
  const wait = await limiter.take(tenant, 2)
  assert.ok(wait > 0 && wait <= 500, `waits for the next token (${wait} ms)`)
  assert.equal(await limiter.take(`${tenant}-other`, 2), 0, 'another tenant has its own bucket')
})

test('integration_events.rate_limit_per_second spaces one tenant\'s sync jobs', async () => {
  const t = await p.newTenant()
  await created(t.api.post('/v1/integrations/connections', {
    provider: 'stripe', name: 'Slow', credentials: { api_key: API_KEY, webhook_secret: WEBHOOK_SECRET }, settings: { integration_events: { rate_limit_per_second: 1 } },
  }))
  const ids: string[] = []
  for (const n of [1, 2, 3]) ids.push((await created(t.api.post('/v1/customers', { external_id: `slow-${n}` }))).id)
  await relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId: t.tenantId, integrations: p.ctx.integrations })
  const calls = await eventually(async () => {
    const found = stripe.calls('POST', '/v1/customers').filter((c) => ids.includes(c.body.metadata?.meterline_customer_id))
    return found.length === 3 ? found : undefined
  }, 'three customers at Stripe')
  // a bucket of 1 token refilled at 1 per second: the third job waits about 2 seconds for its token
  const span = calls[2].at - calls[0].at
  assert.ok(span >= 1500, `three jobs at 1 per second took ${span} ms`)
})

test('generic_http pushes JSON with its bearer token to settings.base_url', async () => {
  // a local receiver standing in for an in-house billing system
  const received: { method: string; url: string; auth: string; body: any }[] = []
  const sink = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      received.push({ method: req.method!, url: req.url!, auth: req.headers.authorization!, body: JSON.parse(body) })
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ id: `erp-${received.length}` }))
    })
  })
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r))
  try {
    const t = await p.newTenant()
    const base = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/api`
    await created(t.api.post('/v1/integrations/connections', { provider: 'generic_http', name: 'ERP', credentials: { api_key: 'erp-token-1', webhook_secret: 's' }, settings: { base_url: base } }))
    const customer = await created(t.api.post('/v1/customers', { external_id: 'erp-c', name: 'ERP Customer' }))
    const first = await t.api.post('/v1/integrations/sync', { entity_type: 'customer', entity_id: customer.id, provider: 'generic_http', method: 'push' })
    assert.deepEqual([first.status, first.body.outcome, first.body.provider_entity_id], [200, 'created', 'erp-1'])
    const second = await t.api.post('/v1/integrations/sync', { entity_type: 'customer', entity_id: customer.id, provider: 'generic_http', method: 'push' })
    assert.deepEqual([second.body.outcome, second.body.provider_entity_id], ['updated', 'erp-2'])
    assert.deepEqual(received.map((r) => `${r.method} ${r.url} ${r.auth}`), ['POST /api/customers Bearer erp-token-1', 'PUT /api/customers/erp-1 Bearer erp-token-1'])
    assert.equal(received[0].body.id, customer.id)
    assert.equal(received[0].body.name, 'ERP Customer')
  } finally {
    sink.close()
  }
})
