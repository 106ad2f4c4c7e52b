// The SSRF guard on webhook endpoints and integration base URLs: refused when configured (400)
// and refused again at delivery time, where no redirect is followed. This file's allow-list
// exempts only the receiver's 127.0.0.1:<port>; a second local server ("bystander") stands
// for an internal service that must never be reached.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Producer } from 'kafkajs'
import { relaySystemEvents } from '../outbox/relay.js'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { parseAllowList } from '../../platform/outbound-address.js'
import { eventually, sqlOn, startTestPlatform, testConfig, type ApiClient, type TestPlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError } from '../../test/support/assertions.js'

let receiver: http.Server
let bystander: http.Server
let receiverPort = 0
let bystanderPort = 0
const bystanderHits: string[] = []
const receiverHits: string[] = []
let p: TestPlatform
let producer: Producer

const listen = async (s: http.Server) => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r))
  return (s.address() as AddressInfo).port
}

before(async () => {
  bystander = http.createServer((req, res) => {
    bystanderHits.push(req.url!)
    res.writeHead(200).end()
  })
  bystanderPort = await listen(bystander)
  receiver = http.createServer((req, res) => {
    receiverHits.push(req.url!)
    req.resume()
    if (req.url === '/redirect') res.writeHead(302, { location: `http://127.0.0.1:${bystanderPort}/stolen` }).end()
    else res.writeHead(200).end()
  })
  receiverPort = await listen(receiver)
  p = await startTestPlatform({
    services: ['billing-api', 'scheduler'],
    config: { webhooks: { ...testConfig().webhooks, timeoutMs: 2000, attempts: 4, backoffMs: 50 }, outbound: { allow: parseAllowList(`127.0.0.1:${receiverPort}`) } },
  })
  producer = await createProducer(createKafka(p.config, 'ssrf-test'))
})
after(async () => {
  await producer?.disconnect()
  await p?.stop()
  receiver?.close()
  bystander?.close()
})

const relay = (tenantId: string) => relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId, onDeliveries: (ids) => p.ctx.webhooks!.enqueue(ids) })

interface Delivery { id: string; delivery_status: string; attempts: number; last_status_code: number | null; last_error: string | null }

async function settledDelivery(api: ApiClient, endpointId: string): Promise<Delivery> {
  return eventually(async () => {
    const d = (await api.get(`/v1/webhooks/deliveries?endpoint_id=${endpointId}`)).body.items[0] as Delivery | undefined
    return d && d.delivery_status !== 'PENDING' ? d : undefined
  }, 'a settled delivery')
}

test('creating a webhook endpoint to a private, loopback, link-local or metadata destination is a 400', async () => {
  const t = await p.newTenant()
  const refused: [string, RegExp][] = [
    ['http://10.0.0.1/hook', /url: outbound URL refused: 10\.0\.0\.1 is not allowed \(private address\)/],
    ['http://[::1]:8080/hook', /::1 is not allowed \(loopback address\)/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is not allowed \(link-local address\)/],
    ['http://metadata.google.internal/computeMetadata/v1/', /metadata\.google\.internal is a cloud metadata host/],
    ['http://[::ffff:a9fe:a9fe]/', /IPv4-mapped link-local/],
    ['http://[fd00::1]/', /unique local/],
    ['http://0.0.0.0:80/', /unspecified/],
    ['http://172.20.1.1/', /private/],
    ['http://100.100.100.100/', /carrier-grade NAT/],
    // 0x7f.1 is 127.0.0.1 to a URL parser: the receiver's address, but not its port
    ['http://0x7f.1:1/', /127\.0\.0\.1 is not allowed \(loopback address\)/],
    [`http://localhost:${bystanderPort}/`, new RegExp(`localhost resolves to 127\\.0\\.0\\.1 \\(loopback address\\)`)],
    ['http://does-not-exist.invalid/', /does not resolve/],
  ]
  for (const [url, message] of refused) {
    assertError(await t.api.post('/v1/webhooks/endpoints', { url }), 400, 'validation_error', message)
  }
  assertError(await t.api.post('/v1/webhooks/endpoints', { url: 'ftp://example.com/' }), 400, 'validation_error')
  assert.equal((await t.api.get('/v1/webhooks/endpoints')).body.pagination.total, 0, 'nothing was stored')
  // the allow-listed receiver is accepted
  await created(t.api.post('/v1/webhooks/endpoints', { url: `http://127.0.0.1:${receiverPort}/ok` }))
})

test('a generic_http integration whose base_url is private is a 400', async () => {
  const t = await p.newTenant()
  const body = (base_url: string) => ({ provider: 'generic_http', name: 'ERP', credentials: { api_key: 'k', webhook_secret: 's' }, settings: { base_url } })
  assertError(await t.api.post('/v1/integrations/connections', body('http://192.168.0.10/api/')), 400, 'validation_error', /settings\.base_url: .*192\.168\.0\.10 is not allowed \(private address\)/)
  assertError(await t.api.post('/v1/integrations/connections', body('http://[fe80::1]/')), 400, 'validation_error', /link-local/)
  assert.equal((await t.api.get('/v1/integrations/connections')).body.pagination.total, 0)
})

test('a generic_http sync whose stored base_url now resolves to loopback is refused with a 400; nothing is sent or linked', async () => {
  const t = await p.newTenant()
  const conn = await created(t.api.post('/v1/integrations/connections', {
    provider: 'generic_http', name: 'ERP', credentials: { api_key: 'k', webhook_secret: 's' }, settings: { base_url: `http://127.0.0.1:${receiverPort}/erp/` },
  }))
  await sqlOn(p)(`UPDATE integration_connections SET settings = jsonb_set(settings, '{base_url}', to_jsonb(?::text)) WHERE id = ?`, [`http://localhost:${bystanderPort}/erp/`, conn.id])
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const res = await t.api.post('/v1/integrations/sync', { entity_type: 'customer', entity_id: customer.id, provider: 'generic_http', method: 'push' })
  assertError(res, 400, 'validation_error', /^settings\.base_url: outbound URL refused: localhost resolves to 127\.0\.0\.1 \(loopback address\)$/)
  assert.deepEqual(bystanderHits, [])
  assert.equal(receiverHits.filter((h) => h.startsWith('/erp/')).length, 0)
  assert.deepEqual(await sqlOn(p)(`SELECT id FROM entity_integration_mappings WHERE tenant_id = ?`, [t.tenantId]), [])
})

test('at delivery time, a URL that now resolves to loopback is refused: FAILED at once, the reason recorded, nothing sent', async () => {
  const t = await p.newTenant()
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: `http://127.0.0.1:${receiverPort}/fine` }))
  // The stored URL now names a host that resolves to an address off the allow-list (as after
  // a DNS change, or a row stored before the guard existed).
  await sqlOn(p)(`UPDATE webhook_endpoints SET url = ? WHERE id = ?`, [`http://localhost:${bystanderPort}/internal`, ep.id])
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  assert.equal(await relay(t.tenantId), 1)
  const d = await settledDelivery(t.api, ep.id)
  assert.equal(d.delivery_status, 'FAILED')
  assert.equal(d.attempts, 1, 'a refusal is not retried')
  assert.equal(d.last_status_code, null)
  assert.equal(d.last_error, `OutboundUrlRefused: outbound URL refused: localhost resolves to 127.0.0.1 (loopback address)`)
  const log = (await t.api.get(`/v1/webhooks/deliveries/${d.id}`)).body.attempt_log
  assert.equal(log.length, 1)
  assert.match(log[0].error, /loopback address/)
  assert.deepEqual(bystanderHits, [])
})

test('a redirect from an allowed receiver is not followed', async () => {
  const t = await p.newTenant()
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: `http://127.0.0.1:${receiverPort}/redirect` }))
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  await relay(t.tenantId)
  const d = await settledDelivery(t.api, ep.id)
  assert.equal(d.delivery_status, 'FAILED')
  assert.equal(d.attempts, 4, 'a 302 is an ordinary failed attempt, retried')
  assert.equal(d.last_status_code, 302)
  assert.equal(d.last_error, 'receiver answered 302')
  assert.equal(receiverHits.filter((h) => h === '/redirect').length, 4)
  assert.deepEqual(bystanderHits, [])
})
