// Bad input gets a clear ErrorResponse and writes nothing: no Kafka record is produced.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Admin } from 'kafkajs'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { startTestPlatform, type TestPlatform } from '../support/platform.js'
import { assertError } from '../support/assertions.js'

let p: TestPlatform
let admin: Admin
before(async () => {
  p = await startTestPlatform()
  // Make sure the topic exists so its offsets can be read.
  const producer = await createProducer(createKafka(p.config, 'bad-input-setup'))
  await producer.send({ topic: p.config.eventsTopic, messages: [] }).catch(() => undefined)
  await producer.disconnect()
  admin = createKafka(p.config, 'bad-input-admin').admin()
  await admin.connect()
})
after(async () => {
  await admin?.disconnect()
  await p?.stop()
})

async function topicEnd(): Promise<string> {
  const offsets = await admin.fetchTopicOffsets(p.config.eventsTopic).catch(() => [])
  return offsets.map((o) => `${o.partition}:${o.high}`).sort().join(',')
}

const good = { event_name: 'call', external_customer_id: 'c' }


test('invalid ingest requests are rejected whole, naming the index, and produce nothing', async () => {
  const { api } = await p.newTenant()
  const before = await topicEnd()
  const oversize = Array.from({ length: 1001 }, (_, i) => ({ ...good, event_id: `o${i}` }))
  assertError(await api.post('/v1/events/raw/bulk', { events: oversize }), 400, 'validation_error', /events must NOT have more than 1000 items/)
  assertError(await api.post('/v1/events/raw/bulk', { events: [] }), 400, 'validation_error', /events/)
  assertError(await api.post('/v1/events/raw/bulk', { events: [good, good, { ...good, timestamp: 'yesterday' }] }), 400, 'validation_error', /events\[2\]\.timestamp/)
  assertError(await api.post('/v1/events/raw/bulk', { events: [good, { ...good, external_customer_id: 42 }] }), 400, 'validation_error', /events\[1\]\.external_customer_id must be string/)
  assertError(await api.post('/v1/events/raw/bulk', { events: [{ ...good, properties: [1, 2] }] }), 400, 'validation_error', /events\[0\]\.properties must be object/)
  assertError(await api.post('/v1/events/raw/bulk', { events: [{ external_customer_id: 'c' }] }), 400, 'validation_error', /events\[0\]\.event_name/)
  assertError(await api.post('/v1/events/raw/bulk', { events: [{ ...good, event_name: '   ' }] }), 400, 'validation_error', /events\[0\]\.event_name/)
  assertError(await api.post('/v1/events/raw/bulk', { events: [{ ...good, surprise: true }] }), 400, 'validation_error', /events\[0\]\.surprise/)
  assertError(await api.post('/v1/events', '{"event_name": "call", '), 400, 'validation_error', /malformed JSON/)
  assertError(await api.request('POST', '/v1/events', 'event_name=call', { 'content-type': 'text/plain' }), 400, 'validation_error', /body must be object/)
  assertError(await api.request('POST', '/v1/events', '<e/>', { 'content-type': 'application/xml' }), 415, 'validation_error')
  assertError(await api.post('/v1/events', { ...good, timestamp: 12 }), 400, 'validation_error', /timestamp/)
  const huge = 'x'.repeat(11 * 1024 * 1024)
  assertError(await api.post('/v1/events', { ...good, properties: { huge } }), 413, 'validation_error')
  assert.equal(await topicEnd(), before, 'no record reached Kafka')
})

test('missing or unknown API keys get 401 and nothing is produced', async () => {
  const before = await topicEnd()
  assertError(await p.client().post('/v1/events', good), 401, 'permission_denied', /x-api-key/)
  assertError(await p.client('ml_not-a-real-key').post('/v1/events', good), 401, 'permission_denied')
  assertError(await p.client('ml_not-a-real-key').get('/v1/meters'), 401, 'permission_denied')
  assert.equal(await topicEnd(), before)
})

test('API validation errors and unknown routes use ErrorResponse', async () => {
  const { api } = await p.newTenant()
  assertError(await api.post('/v1/meters', { name: 'm', event_name: 'e', aggregation: { type: 'SUM' } }), 400, 'validation_error', /aggregation.field/)
  assertError(await api.post('/v1/meters', { name: 'm', event_name: 'e', aggregation: { type: 'MEDIAN' } }), 400, 'validation_error', /aggregation.type/)
  assertError(await api.post('/v1/customers', { external_id: 'c', address_line1: 'x'.repeat(256) }), 400, 'validation_error', /address_line1/)
  assertError(await api.post('/v1/customers', { external_id: 'c', address_postal_code: '1'.repeat(21) }), 400, 'validation_error', /address_postal_code/)
  assertError(await api.get('/v1/no-such-route'), 404, 'not_found')
  assertError(await api.get('/v1/meters/meter_unknown'), 404, 'not_found')
  assertError(await api.get('/v1/meters?limit=0'), 400, 'validation_error', /limit/)
  // Usage prices billed in advance are refused (spec: Errors 9), and the plan is not created.
  const meter = (await api.post('/v1/meters', { name: 'm', event_name: 'e', aggregation: { type: 'COUNT' } })).body
  const plans = (await api.get('/v1/plans')).body.pagination.total
  assertError(
    await api.post('/v1/plans', { name: 'bad', prices: [{ type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'USD', amount: '1', meter_id: meter.id, billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] }),
    400, 'validation_error', /ARREAR/,
  )
  assertError(
    await api.post('/v1/plans', { name: 'bad', prices: [{ type: 'FIXED', billing_model: 'TIERED', tier_mode: 'SLAB', currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', tiers: [{ up_to: 10, unit_amount: '1' }, { up_to: 5, unit_amount: '1' }, { up_to: null, unit_amount: '1' }] }] }),
    400, 'validation_error', /tiers/,
  )
  assertError(await api.post('/v1/plans', { name: 'bad', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: 0.1, billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }] }), 400, 'validation_error', /amount/)
  assert.equal((await api.get('/v1/plans')).body.pagination.total, plans, 'no partial plan left behind')
  // A duplicate external_id is a conflict.
  await api.post('/v1/customers', { external_id: 'dup' })
  assertError(await api.post('/v1/customers', { external_id: 'dup' }), 409, 'already_exists')
})
