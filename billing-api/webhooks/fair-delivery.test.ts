// Fair delivery through the real worker (Redis, BullMQ, Postgres, receivers on 127.0.0.1):
// an endpoint's circuit opens after consecutive failures and closes after a successful probe;
// an endpoint never has more than WEBHOOK_ENDPOINT_CONCURRENCY attempts in flight; and a tenant
// whose endpoints accept connections and never answer does not hold up another tenant.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import type { AddressInfo } from 'node:net'
import type { Producer } from 'kafkajs'
import type { Counter, Histogram } from 'prom-client'
import { relaySystemEvents } from '../outbox/relay.js'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { webhookAttemptSeconds, webhookCircuitTransitions, webhookDeliveries, webhookDeliverySeconds } from '../../platform/metrics.js'
import { eventually, startTestPlatform, testConfig, type ApiClient, type TestPlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'

const COOLDOWN_MS = 2500
const webhooks = { ...testConfig().webhooks, backoffMs: 200, attempts: 5, circuitFailures: 3, circuitCooldownMs: COOLDOWN_MS }

let p: TestPlatform
let producer: Producer

// A receiver answering 503 while `down`, else 200 after `delayMs`; it counts requests in flight.
const receiver = { down: false, delayMs: 0, requests: [] as { path: string; status: number; at: number }[], inFlight: 0, maxInFlight: 0 }
let receiverServer: http.Server
let receiverUrl = ''
// Accepts TCP connections and never answers.
const hung = new Set<net.Socket>()
let hangServer: net.Server
let hangUrl = ''

const listen = async (server: net.Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

before(async () => {
  receiverServer = http.createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      receiver.inFlight++
      receiver.maxInFlight = Math.max(receiver.maxInFlight, receiver.inFlight)
      const status = receiver.down ? 503 : 200
      setTimeout(() => {
        receiver.inFlight--
        receiver.requests.push({ path: req.url!, status, at: Date.now() })
        res.writeHead(status).end()
      }, receiver.down ? 0 : receiver.delayMs)
    })
  })
  receiverUrl = await listen(receiverServer)
  hangServer = net.createServer((socket) => {
    hung.add(socket)
    socket.on('close', () => hung.delete(socket))
  })
  hangUrl = await listen(hangServer)
  p = await startTestPlatform({ services: ['billing-api', 'scheduler'], config: { webhooks } })
  producer = await createProducer(createKafka(p.config, 'fair-webhooks-test'))
})
after(async () => {
  // Hung attempts end at once (connection reset) instead of at their timeout.
  for (const s of hung) s.destroy()
  hangServer?.close()
  await producer?.disconnect()
  await p?.stop()
  receiverServer?.close()
})

const relay = (tenantId: string) => relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId, onDeliveries: (ids) => p.ctx.webhooks!.enqueue(ids) })

async function customers(api: ApiClient, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await created(api.post('/v1/customers', { external_id: `c${i}` }))
}

interface Delivery { id: string; delivery_status: string; attempts: number }
async function deliveries(api: ApiClient, endpointId: string): Promise<Delivery[]> {
  return (await api.get(`/v1/webhooks/deliveries?endpoint_id=${endpointId}&limit=100`)).body.items as Delivery[]
}

async function counter<L extends string>(c: Counter<L>, labels: Record<L, string>): Promise<number> {
  const keys = Object.keys(labels) as L[]
  return (await c.get()).values.find((v) => keys.every((k) => v.labels[k] === labels[k]))?.value ?? 0
}
async function observations<L extends string>(h: Histogram<L>, labels: Partial<Record<L, string>> = {}): Promise<number> {
  const keys = Object.keys(labels) as L[]
  return (await h.get()).values.find((v) => v.metricName?.endsWith('_count') && keys.every((k) => v.labels[k] === labels[k]))?.value ?? 0
}

test('three consecutive failures open the circuit: the next attempt waits out the cool-down without counting, and a successful probe closes it', async () => {
  const before = {
    opened: await counter(webhookCircuitTransitions, { to: 'open' }), closed: await counter(webhookCircuitTransitions, { to: 'closed' }),
    retried: await counter(webhookDeliveries, { outcome: 'retried' }), success: await counter(webhookDeliveries, { outcome: 'success' }),
    circuitOpen: await counter(webhookDeliveries, { outcome: 'circuit_open' }), latencies: await observations(webhookDeliverySeconds),
    failedAttempts: await observations(webhookAttemptSeconds, { outcome: 'failed' }),
  }
  const t = await p.newTenant()
  receiver.down = true
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: `${receiverUrl}/circuit` }))
  await customers(t.api, 1)
  await relay(t.tenantId)
  // Backoff 200, 400 ms: the third failure comes ~0.6 s after the first and opens the circuit.
  await eventually(async () => ((await counter(webhookCircuitTransitions, { to: 'open' })) === before.opened + 1 ? true : undefined), 'the circuit to open')
  const [d] = await deliveries(t.api, ep.id)
  assert.equal(d.attempts, 3)
  receiver.down = false
  const done = await eventually(async () => {
    const x = (await t.api.get(`/v1/webhooks/deliveries/${d.id}`)).body
    return x.delivery_status === 'SUCCEEDED' ? x : undefined
  }, 'the probe to deliver')
  // The refused pick (after the 800 ms backoff) cost no attempt: the probe is attempt 4 of 5.
  assert.equal(done.attempts, 4)
  const log = done.attempt_log as { status_code: number; created_at: string }[]
  assert.deepEqual(log.map((a) => a.status_code), [503, 503, 503, 200])
  const gap = Date.parse(log[3].created_at) - Date.parse(log[2].created_at)
  assert.ok(gap >= COOLDOWN_MS - 50, `the probe came after the cool-down (${gap} ms), not after the 800 ms backoff`)
  assert.deepEqual(receiver.requests.filter((r) => r.path === '/circuit').map((r) => r.status), [503, 503, 503, 200])

  assert.equal(await counter(webhookCircuitTransitions, { to: 'closed' }), before.closed + 1)
  assert.equal(await counter(webhookDeliveries, { outcome: 'retried' }), before.retried + 3)
  assert.equal(await counter(webhookDeliveries, { outcome: 'success' }), before.success + 1)
  assert.ok((await counter(webhookDeliveries, { outcome: 'circuit_open' })) > before.circuitOpen)
  assert.equal(await observations(webhookDeliverySeconds), before.latencies + 1)
  assert.equal(await observations(webhookAttemptSeconds, { outcome: 'failed' }), before.failedAttempts + 3)
})

test('an endpoint never has more than 2 attempts in flight; the parked deliveries are woken and each delivered once, on its first attempt', async () => {
  const t = await p.newTenant()
  receiver.delayMs = 300
  receiver.maxInFlight = 0
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: `${receiverUrl}/capped` }))
  await customers(t.api, 8)
  assert.equal(await relay(t.tenantId), 8)
  const all = await eventually(async () => {
    const ds = await deliveries(t.api, ep.id)
    return ds.length === 8 && ds.every((x) => x.delivery_status === 'SUCCEEDED') ? ds : undefined
  }, 'all 8 deliveries')
  receiver.delayMs = 0
  assert.equal(receiver.maxInFlight, 2)
  assert.deepEqual(all.map((x) => x.attempts), [1, 1, 1, 1, 1, 1, 1, 1])
  assert.equal(receiver.requests.filter((r) => r.path === '/capped').length, 8)
})

test("a tenant whose 3 endpoints hang holds 4 connections (its cap) and does not delay another tenant's delivery", async (t) => {
  const a = await p.newTenant('hanging')
  const b = await p.newTenant('healthy')
  const hanging = []
  for (const path of ['a1', 'a2', 'a3']) hanging.push(await created(a.api.post('/v1/webhooks/endpoints', { url: `${hangUrl}/${path}` })))
  await customers(a.api, 20)
  assert.equal(await relay(a.tenantId), 20) // 60 deliveries queued ahead, each would hang for the 10 s timeout
  const ep = await created(b.api.post('/v1/webhooks/endpoints', { url: `${receiverUrl}/tenant-b` }))
  await customers(b.api, 1)
  const enqueued = Date.now()
  await relay(b.tenantId)
  const arrived = await eventually(async () => receiver.requests.find((r) => r.path === '/tenant-b'), "tenant B's delivery", 5_000)
  const delayMs = arrived.at - enqueued
  t.diagnostic(`tenant B's delivery arrived ${delayMs} ms after it was enqueued behind 60 hanging deliveries`)
  assert.ok(delayMs < 5_000)
  // Tenant A holds its cap and no more: 3 endpoints x 2 per endpoint would be 6, the tenant cap is 4.
  assert.equal(hung.size, 4)
  const pendingA = (await Promise.all(hanging.map((ep) => deliveries(a.api, ep.id)))).flat()
  assert.equal(pendingA.length, 60)
  assert.ok(pendingA.every((x) => x.delivery_status === 'PENDING'), "A's deliveries wait; none is lost")
  const [delivered] = await eventually(async () => {
    const ds = await deliveries(b.api, ep.id)
    return ds[0]?.delivery_status === 'SUCCEEDED' ? ds : undefined
  }, "B's delivery recorded")
  assert.equal(delivered.attempts, 1)
})
