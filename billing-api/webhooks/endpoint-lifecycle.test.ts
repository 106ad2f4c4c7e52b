// Deleting and disabling an endpoint whose deliveries are waiting for retries, through the real
// worker (Redis, BullMQ, Postgres) and a receiver on 127.0.0.1 that fails: once the endpoint is
// deleted or disabled no further attempt reaches the receiver, and the deliveries show CANCELLED.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { Queue } from 'bullmq'
import type { Redis } from 'ioredis'
import type { Producer } from 'kafkajs'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { createRedis } from '../../platform/redis.js'
import { assertError } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { eventually, startTestPlatform, testConfig, type TestPlatform } from '../../test/support/platform.js'
import { relaySystemEvents } from '../outbox/relay.js'
import { WEBHOOK_QUEUE } from './queue.js'

/** requests received per path; a path in `healthy` answers 200, every other one 500 */
const received = new Map<string, number>()
const healthy = new Set<string>()
let receiver: http.Server
let receiverUrl = ''
let p: TestPlatform
let producer: Producer
let redis: Redis
let queue: Queue

before(async () => {
  receiver = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      received.set(req.url!, (received.get(req.url!) ?? 0) + 1)
      res.writeHead(healthy.has(req.url!) ? 200 : 500).end()
    })
  })
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`
  // Retries 1.5 s, 3 s, 6 s ... apart: the endpoint is deleted while every delivery waits for its retry.
  p = await startTestPlatform({ services: ['billing-api', 'scheduler'], config: { webhooks: { ...testConfig().webhooks, timeoutMs: 2000, attempts: 5, backoffMs: 1500 } } })
  producer = await createProducer(createKafka(p.config, 'webhook-lifecycle-test'))
  redis = createRedis(p.config.redisUrl)
  queue = new Queue(WEBHOOK_QUEUE, { connection: redis, prefix: p.config.redisPrefix })
})
after(async () => {
  await producer?.disconnect()
  await queue?.close()
  await redis?.quit()
  await p?.stop()
  receiver?.close()
})

const relay = (tenantId: string) => relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId, onDeliveries: (ids) => p.ctx.webhooks!.enqueue(ids) })

interface DeliveryView { id: string; delivery_status: string; cancel_reason: string | null; attempts: number }
const deliveries = async (api: any, endpointId: string): Promise<DeliveryView[]> => (await api.get(`/v1/webhooks/deliveries?endpoint_id=${endpointId}&limit=100`)).body.items

/** Every queued delivery job ended (completed or failed): nothing is left to retry. */
const queueDrained = () => eventually(async () => {
  const c = await queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized', 'waiting-children')
  return Object.values(c).every((n) => n === 0) ? true : undefined
}, 'the webhook queue to drain')

/** An endpoint at `path` with three deliveries whose first attempt failed and whose retries are queued. */
async function endpointWithPendingRetries(path: string) {
  const t = await p.newTenant()
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: `${receiverUrl}${path}`, event_types: ['customer.created'] }))
  for (const id of ['a', 'b', 'c']) await created(t.api.post('/v1/customers', { external_id: `${path}-${id}` }))
  assert.equal(await relay(t.tenantId), 3)
  await eventually(async () => ((received.get(path) ?? 0) >= 3 ? true : undefined), 'the three first attempts')
  const pending = await deliveries(t.api, ep.id)
  assert.equal(pending.length, 3)
  assert.ok(pending.every((d) => d.delivery_status === 'PENDING'), JSON.stringify(pending))
  return { t, ep, pending }
}

test('deleting an endpoint with retries pending: no further attempt reaches it, its deliveries are CANCELLED (endpoint_deleted)', async () => {
  const { t, ep, pending } = await endpointWithPendingRetries('/deleted')
  assert.equal((await t.api.delete(`/v1/webhooks/endpoints/${ep.id}`)).status, 204)
  const atDeletion = received.get('/deleted')
  const after = await deliveries(t.api, ep.id)
  assert.deepEqual(after.map((d) => [d.delivery_status, d.cancel_reason]), [0, 1, 2].map(() => ['CANCELLED', 'endpoint_deleted']))
  // the retries fall due and end without an attempt
  await queueDrained()
  assert.equal(received.get('/deleted'), atDeletion)
  const final = await deliveries(t.api, ep.id)
  assert.deepEqual(final.map((d) => d.delivery_status), ['CANCELLED', 'CANCELLED', 'CANCELLED'])
  assert.deepEqual(final.map((d) => d.attempts).sort(), after.map((d) => d.attempts).sort())
  const listed = (await t.api.get('/v1/webhooks/deliveries?delivery_status=CANCELLED')).body.items.map((d: DeliveryView) => d.id).sort()
  assert.deepEqual(listed, pending.map((d) => d.id).sort())
  // a cancelled delivery of a deleted endpoint cannot be retried; the endpoint is gone
  assertError(await t.api.post(`/v1/webhooks/${pending[0].id}/retry`), 400, 'invalid_operation', /is deleted/)
  assertError(await t.api.post(`/v1/webhooks/endpoints/${ep.id}/disable`), 404, 'not_found')
  assert.equal((await t.api.get(`/v1/webhooks/endpoints/${ep.id}`)).status, 404)
})

test('disabling cancels pending retries and new events; enabling delivers new events, and a cancelled one on retry', async () => {
  const { t, ep, pending } = await endpointWithPendingRetries('/disabled')
  const other = await p.newTenant()
  assertError(await other.api.post(`/v1/webhooks/endpoints/${ep.id}/disable`), 404, 'not_found')
  const disabled = await t.api.post(`/v1/webhooks/endpoints/${ep.id}/disable`)
  assert.equal(disabled.status, 200, JSON.stringify(disabled.body))
  assert.equal(disabled.body.disabled, true)
  assert.ok(disabled.body.disabled_at)
  const atDisable = received.get('/disabled')
  assert.deepEqual((await deliveries(t.api, ep.id)).map((d) => [d.delivery_status, d.cancel_reason]), [0, 1, 2].map(() => ['CANCELLED', 'endpoint_disabled']))
  // an event while disabled makes no delivery
  await created(t.api.post('/v1/customers', { external_id: 'while-disabled' }))
  assert.equal(await relay(t.tenantId), 1)
  await queueDrained()
  assert.equal(received.get('/disabled'), atDisable)
  assert.equal((await deliveries(t.api, ep.id)).length, 3)
  assertError(await t.api.post(`/v1/webhooks/${pending[0].id}/retry`), 400, 'invalid_operation', /disabled; enable it first/)
  // disabling twice changes nothing
  assert.equal((await t.api.post(`/v1/webhooks/endpoints/${ep.id}/disable`)).body.disabled_at, disabled.body.disabled_at)

  healthy.add('/disabled')
  const enabled = await t.api.post(`/v1/webhooks/endpoints/${ep.id}/enable`)
  assert.equal(enabled.status, 200)
  assert.deepEqual([enabled.body.disabled, enabled.body.disabled_at], [false, null])
  // the cancelled ones stay cancelled; a new event is delivered
  const customer = await created(t.api.post('/v1/customers', { external_id: 'after-enable' }))
  assert.equal(await relay(t.tenantId), 1)
  const fresh = await eventually(async () => (await deliveries(t.api, ep.id)).find((d) => d.delivery_status === 'SUCCEEDED'), 'the new event delivered')
  assert.ok(customer.id)
  assert.equal(fresh.attempts, 1)
  assert.deepEqual((await deliveries(t.api, ep.id)).filter((d) => d.delivery_status === 'CANCELLED').map((d) => d.id).sort(), pending.map((d) => d.id).sort())
  // a cancelled delivery is sent again on request
  assert.equal((await t.api.post(`/v1/webhooks/${pending[0].id}/retry`)).status, 202)
  const redone = await eventually(async () => {
    const d = (await t.api.get(`/v1/webhooks/deliveries/${pending[0].id}`)).body
    return d.delivery_status === 'SUCCEEDED' ? d : undefined
  }, 'the retried delivery')
  assert.equal(redone.cancel_reason, null)
  assert.equal(redone.attempt_log.at(-1).status_code, 200)
})
