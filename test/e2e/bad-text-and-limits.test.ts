// Inputs that used to answer 500 or were stored wrongly (issue #13): unstorable text (NUL, lone
// surrogates) anywhere, `%00` in path ids, out-of-range integers, event timestamps outside the
// window, event values with more digits than Decimal(38, 12) keeps, and oversized URLs, headers
// and bodies. Each gets a 4xx ErrorResponse and writes nothing.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { request as httpRequest } from 'node:http'
import type { Admin } from 'kafkajs'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { startTestPlatform, type TestPlatform } from '../support/platform.js'
import { assertError, countRows } from '../support/assertions.js'

let p: TestPlatform
let admin: Admin
before(async () => {
  p = await startTestPlatform({ config: { ingestTimeWindow: { minTime: new Date('2000-01-01T00:00:00Z'), maxFutureMinutes: 5, maxAgeDays: 0 } } })
  const producer = await createProducer(createKafka(p.config, 'bad-text-setup'))
  await producer.send({ topic: p.config.eventsTopic, messages: [] }).catch(() => undefined) // creates the topic; an empty send may be refused
  await producer.disconnect()
  admin = createKafka(p.config, 'bad-text-admin').admin()
  await admin.connect()
})
after(async () => {
  await admin?.disconnect()
  await p?.stop()
})

const topicEnd = async () => (await admin.fetchTopicOffsets(p.config.eventsTopic)).map((o) => `${o.partition}:${o.high}`).sort().join(',')
const good = { event_name: 'call', external_customer_id: 'c' }

test('NUL and lone surrogates in any string, key or path id: 400 naming the field, nothing written', async () => {
  const t = await p.newTenant()
  const customers = await countRows(p, 'customers', t.tenantId)
  assertError(await t.api.post('/v1/customers', { external_id: 'a\u0000b' }), 400, 'validation_error', /^external_id must not contain the NUL character/)
  assertError(await t.api.post('/v1/customers', { external_id: 'ok', name: 'x\ud800' }), 400, 'validation_error', /^name must not contain a lone UTF-16 surrogate/)
  assertError(await t.api.post('/v1/customers', { external_id: 'ok', metadata: { 'k\u0000': 'v' } }), 400, 'validation_error', /^metadata\.k\\u0000 key must not contain/)
  assertError(await t.api.post('/v1/customers', '{"external_id":"\\udc00"}'), 400, 'validation_error', /external_id must not contain a lone/)
  assertError(await t.api.get('/v1/customers/%00'), 400, 'validation_error', /^path\.id must not contain the NUL/)
  assertError(await t.api.get('/v1/customers/%ED%A0%80'), 400, 'validation_error', /not valid/)
  assertError(await t.api.get('/v1/customers?external_id=%00'), 400, 'validation_error', /^query\.external_id must not/)
  assert.equal(await countRows(p, 'customers', t.tenantId), customers)
  // A well-formed pair (an emoji) is fine.
  assert.equal((await t.api.post('/v1/customers', { external_id: 'emoji', name: '😀' })).status, 201)

  const before = await topicEnd()
  assertError(await t.api.post('/v1/events/raw/bulk', { events: [good, { ...good, properties: { note: 'a\u0000' } }] }), 400, 'validation_error', /^events\[1\]\.properties\.note must not contain the NUL/)
  assertError(await t.api.post('/v1/events', { ...good, source: '\ud83d' }), 400, 'validation_error', /^source must not contain a lone/)
  assert.equal(await topicEnd(), before, 'no record reached Kafka')
})

test('offset and limit beyond their range, and integers beyond 32 bits: 400', async () => {
  const t = await p.newTenant()
  assertError(await t.api.get('/v1/customers?offset=100000000000000000000'), 400, 'validation_error', /offset must be <= 2147483647/)
  assertError(await t.api.get('/v1/webhooks/endpoints?offset=9007199254740993'), 400, 'validation_error', /offset/)
  assertError(await t.api.get('/v1/customers?limit=1e400'), 400, 'validation_error', /limit/)
  assertError(await t.api.get('/v1/customers?offset=-1'), 400, 'validation_error', /offset/)
  const plans = await countRows(p, 'plans', t.tenantId)
  const price = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '1', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }
  assertError(await t.api.post('/v1/plans', { name: 'big trial', prices: [{ ...price, trial_period_days: 2 ** 40 }] }), 400, 'validation_error', /prices\[0\]\.trial_period_days must be <= 2147483647/)
  assert.equal(await countRows(p, 'plans', t.tenantId), plans)
})

test('event timestamps outside [INGEST_MIN_EVENT_TIME, now + INGEST_MAX_FUTURE_MINUTES] are refused, naming the event', async () => {
  const { api } = await p.newTenant()
  const before = await topicEnd()
  for (const ts of ['0001-01-01T00:00:00Z', '1899-12-31T23:59:59Z', '1999-12-31T23:59:59.999Z', '2300-01-01T00:00:00Z', '9999-12-31T23:59:59Z']) {
    assertError(await api.post('/v1/events/raw/bulk', { events: [good, { ...good, timestamp: ts }] }), 400, 'validation_error', /^events\[1\]\.timestamp must be between 2000-01-01T00:00:00.000Z and 5 minutes from now/)
  }
  const tooLate = new Date(Date.now() + 6 * 60_000).toISOString()
  assertError(await api.post('/v1/events', { ...good, timestamp: tooLate }), 400, 'validation_error', /^timestamp must be between/)
  assert.equal(await topicEnd(), before, 'no record reached Kafka')
  // The edges of the window are accepted.
  const soon = new Date(Date.now() + 4 * 60_000).toISOString()
  assert.equal((await api.post('/v1/events/raw/bulk', { events: [{ ...good, timestamp: '2000-01-01T00:00:00Z' }, { ...good, timestamp: soon }] })).status, 202)
})

test('numeric property values must fit Decimal(38, 12) digit for digit: 400 naming the property', async () => {
  const { api } = await p.newTenant()
  const before = await topicEnd()
  const refuse = async (properties: object, field: RegExp) =>
    assertError(await api.post('/v1/events/raw/bulk', { events: [good, { ...good, properties }] }), 400, 'validation_error', field)
  await refuse({ tokens: '1.0000000000000000001' }, /^events\[1\]\.properties\.tokens has 19 decimal places; values are stored with at most 12/)
  await refuse({ usage: { gb: '0.0000000000005' } }, /^events\[1\]\.properties\.usage\.gb has 13 decimal places/)
  await refuse({ list: [1, 0.30000000000000004] }, /^events\[1\]\.properties\.list\[1\] has 17 decimal places/)
  await refuse({ n: 1e30 }, /^events\[1\]\.properties\.n has 31 integer digits/)
  await refuse({ n: '123456789012345678901234567.5' }, /has 27 integer digits/)
  assert.equal(await topicEnd(), before, 'no record reached Kafka')
  // What fits is accepted: 12 decimals, trailing zeros, 26 integer digits, identifiers of digits only, 1e-7.
  const ok = { a: '0.000000000001', b: '1.500000000000000000', c: '12345678901234567890123456.5', id: '1234567890123456789012345678901234', d: 1e-7, e: 0.1 }
  assert.equal((await api.post('/v1/events', { ...good, properties: ok })).status, 202)
})

/** A raw request: fetch refuses headers this large and cannot send arbitrary request lines. */
function raw(path: string, headers: Record<string, string>): Promise<{ status: number; body: any }> {
  const url = new URL(p.url)
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path, method: 'GET', headers }, (res) => {
      let text = ''
      res.on('data', (c) => (text += c))
      res.on('end', () => resolve({ status: res.statusCode!, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end()
  })
}

test('414, 431 and 413 answer the ErrorResponse shape', async () => {
  const t = await p.newTenant()
  assertError(await t.api.get(`/v1/customers?external_id=${'x'.repeat(9000)}`), 414, 'validation_error', /URL is longer than 8192 bytes/)
  assertError(await t.api.get(`/v1/customers/${'x'.repeat(200)}`), 414, 'validation_error', /path parameter is too long/)
  assertError(await raw('/v1/customers', { 'x-api-key': t.apiKey, 'x-padding': 'y'.repeat(20_000) }), 431, 'validation_error', /headers are too large/)
  const customers = await countRows(p, 'customers', t.tenantId)
  assertError(await t.api.post('/v1/customers', { external_id: 'big', name: 'x'.repeat(2 * 1024 * 1024) }), 413, 'validation_error', /too large/)
  assert.equal(await countRows(p, 'customers', t.tenantId), customers)
})
