// Outbound webhooks against a local receiver: signed and verifiable, retried with backoff
// until one success, every attempt recorded, manual retry of a failed delivery.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Producer } from 'kafkajs'
import { relaySystemEvents } from '../outbox/relay.js'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { eventually, startTestPlatform, testConfig, type TestPlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError } from '../../test/support/assertions.js'
import { verify } from './signature.js'

interface Received { path: string; headers: Record<string, string>; body: string; answered: number }
const received: Received[] = []
const failuresLeft = new Map<string, number>() // path -> how many more 500s to answer
let receiver: http.Server
let receiverUrl = ''
let p: TestPlatform
let producer: Producer

before(async () => {
  receiver = http.createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      const left = failuresLeft.get(req.url!) ?? 0
      const answered = left > 0 ? 500 : 200
      if (left > 0) failuresLeft.set(req.url!, left - 1)
      received.push({ path: req.url!, headers: req.headers as Record<string, string>, body, answered })
      res.writeHead(answered).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
  p = await startTestPlatform({ services: ['billing-api', 'scheduler'], config: { webhooks: { ...testConfig().webhooks, timeoutMs: 2000, attempts: 4, backoffMs: 50 } } })
  producer = await createProducer(createKafka(p.config, 'webhooks-test'))
})
after(async () => {
  await producer?.disconnect()
  await p?.stop()
  receiver?.close()
})

const relay = (tenantId: string) => relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId, onDeliveries: (ids) => p.ctx.webhooks!.enqueue(ids) })

interface DeliveryView { id: string; delivery_status: string; [field: string]: unknown }

async function deliveryOf(api: any, endpointId: string): Promise<DeliveryView> {
  return eventually(async () => (await api.get(`/v1/webhooks/deliveries?endpoint_id=${endpointId}`)).body.items[0] as DeliveryView | undefined, 'a delivery')
}

test('a delivery arrives signed (Standard Webhooks) and verifiable; the secret is shown once', async () => {
  const t = await p.newTenant()
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: `${receiverUrl}/ok`, event_types: ['customer.created'] }))
  assert.match(ep.secret, /^whsec_/)
  assert.equal((await t.api.get(`/v1/webhooks/endpoints/${ep.id}`)).body.secret, `whsec_****${ep.secret.slice(-4)}`)
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  assert.equal(await relay(t.tenantId), 1)
  const got = await eventually(async () => received.find((r) => r.path === '/ok' && r.body.includes(customer.id)), 'the webhook')
  assert.equal(verify(ep.secret, got.headers, got.body, Math.floor(Date.now() / 1000)), true)
  assert.equal(verify(ep.secret, got.headers, got.body.replace('acme', 'evil'), Math.floor(Date.now() / 1000)), false)
  const event = JSON.parse(got.body)
  assert.equal(event.event_name, 'customer.created')
  assert.equal(got.headers['webhook-id'], event.id)
  const d = await eventually(async () => {
    const x = (await deliveryOf(t.api, ep.id))
    return x.delivery_status === 'SUCCEEDED' ? x : undefined
  }, 'success recorded')
  assert.equal(d.attempts, 1)
})

test('a receiver that fails three times then succeeds gets exactly one successful delivery, every attempt recorded', async () => {
  const t = await p.newTenant()
  failuresLeft.set('/flaky', 3)
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: `${receiverUrl}/flaky` }))
  await created(t.api.post('/v1/customers', { external_id: 'c' }))
  await relay(t.tenantId)
  const first = (await deliveryOf(t.api, ep.id))
  const done = await eventually(async () => {
    const d = (await t.api.get(`/v1/webhooks/deliveries/${first.id}`)).body
    return d.delivery_status === 'SUCCEEDED' ? d : undefined
  }, 'the fourth attempt')
  assert.deepEqual(done.attempt_log.map((a: any) => a.status_code), [500, 500, 500, 200])
  assert.equal(done.attempts, 4)
  assert.equal(received.filter((r) => r.path === '/flaky' && r.answered === 200).length, 1)
})

test('a delivery that exhausted its attempts is FAILED; POST /v1/webhooks/{id}/retry redelivers it now', async () => {
  const t = await p.newTenant()
  const other = await p.newTenant()
  failuresLeft.set('/down', 4)
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: `${receiverUrl}/down` }))
  await created(t.api.post('/v1/customers', { external_id: 'c' }))
  await relay(t.tenantId)
  const first = (await deliveryOf(t.api, ep.id))
  await eventually(async () => ((await t.api.get(`/v1/webhooks/deliveries/${first.id}`)).body.delivery_status === 'FAILED' ? true : undefined), 'FAILED')
  assertError(await other.api.post(`/v1/webhooks/${first.id}/retry`), 404, 'not_found')
  const retried = await t.api.post(`/v1/webhooks/${first.id}/retry`)
  assert.equal(retried.status, 202)
  const done = await eventually(async () => {
    const d = (await t.api.get(`/v1/webhooks/deliveries/${first.id}`)).body
    return d.delivery_status === 'SUCCEEDED' ? d : undefined
  }, 'redelivery')
  assert.equal(done.attempts, 5)
  assertError(await t.api.post(`/v1/webhooks/${first.id}/retry`), 400, 'invalid_operation', /already succeeded/)
  assert.equal((await other.api.get(`/v1/webhooks/endpoints/${ep.id}`)).status, 404)
})
