// Ingest acknowledges only what Kafka acknowledged: a produce the broker refuses answers 503,
// and the client's retry of the same batch is counted exactly once.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { startPrivateBroker, type PrivateBroker } from '../support/kafka-broker.js'
import { assertError } from '../support/assertions.js'
import { created, usage } from '../support/fixtures.js'

let broker: PrivateBroker
let p: TestPlatform
before(async () => {
  broker = await startPrivateBroker()
  p = await startTestPlatform({ config: { kafkaBrokers: [broker.bootstrap], eventsTopic: 'events' } })
})
after(async () => {
  await p?.stop()
  await broker?.stop()
})

const PRODUCE_API_KEY = 0
const MESSAGE_TOO_LARGE = 10 // not retriable: kafkajs gives up at once

test('a refused produce is a 503, nothing is counted, and the retried batch counts once', async () => {
  const { api } = await p.newTenant()
  const meter = await created(api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const batch = { events: [1, 2, 3].map((i) => ({ event_id: `e${i}`, event_name: 'call', external_customer_id: 'c' })) }

  broker.control(`errors ${PRODUCE_API_KEY} 1 ${MESSAGE_TOO_LARGE}`)
  await new Promise((r) => setTimeout(r, 300)) // the launcher polls its control pipe every 100 ms
  assertError(await api.post('/v1/events/raw/bulk', batch), 503, 'service_unavailable', /retry/)

  const retry = await api.post('/v1/events/raw/bulk', batch)
  assert.equal(retry.status, 202, JSON.stringify(retry.body))
  await api.post('/v1/events/raw/bulk', { events: [{ event_id: 'marker', event_name: 'call', external_customer_id: 'c' }] })
  const counted = await eventually(async () => {
    const u = await usage(api, meter.id, {})
    return u.value === '4' ? u.value : undefined
  }, 'the retried batch and the marker')
  assert.equal(counted, '4')
})
