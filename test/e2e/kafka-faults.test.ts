// A produce the broker refuses is never a lost event. Without the spool, ingest answers 503
// and the client's retry counts once; with the spool (the default), the batch is accepted from
// disk and its forwarder retries until Kafka takes it, and it counts once.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { eventually, startTestPlatform, testConfig, type TestPlatform } from '../support/platform.js'
import { startPrivateBroker, type PrivateBroker } from '../support/kafka-broker.js'
import { assertError } from '../support/assertions.js'
import { created, usage } from '../support/fixtures.js'

let broker: PrivateBroker
let direct: TestPlatform
let spooled: TestPlatform
before(async () => {
  broker = await startPrivateBroker()
  const base = testConfig()
  direct = await startTestPlatform({ config: { kafkaBrokers: [broker.bootstrap], eventsTopic: 'events', spool: { ...base.spool, enabled: false } } })
  spooled = await startTestPlatform({ config: { kafkaBrokers: [broker.bootstrap], eventsTopic: 'events-spooled' } })
})
after(async () => {
  await direct?.stop()
  await spooled?.stop()
  await broker?.stop()
})

const PRODUCE_API_KEY = 0
const MESSAGE_TOO_LARGE = 10 // not retriable: kafkajs gives up at once

async function counted(api: any, meterId: string, value: string) {
  return eventually(async () => {
    const u = await usage(api, meterId, {})
    return u.value === value ? u.value : undefined
  }, `${value} events counted`)
}

test('spool off: a refused produce is a 503, nothing is counted, and the retried batch counts once', async () => {
  const { api } = await direct.newTenant()
  const meter = await created(api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const batch = { events: [1, 2, 3].map((i) => ({ event_id: `e${i}`, event_name: 'call', external_customer_id: 'c' })) }

  broker.control(`errors ${PRODUCE_API_KEY} 1 ${MESSAGE_TOO_LARGE}`)
  await new Promise((r) => setTimeout(r, 300)) // the launcher polls its control pipe every 100 ms
  assertError(await api.post('/v1/events/raw/bulk', batch), 503, 'service_unavailable', /retry/)

  const retry = await api.post('/v1/events/raw/bulk', batch)
  assert.equal(retry.status, 202, JSON.stringify(retry.body))
  await api.post('/v1/events/raw/bulk', { events: [{ event_id: 'marker', event_name: 'call', external_customer_id: 'c' }] })
  assert.equal(await counted(api, meter.id, '4'), '4')
})

test('spool on: refused produces are retried by the forwarder; the batch is accepted and counts once', async () => {
  const { api } = await spooled.newTenant()
  const meter = await created(api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const batch = { events: [1, 2, 3].map((i) => ({ event_id: `e${i}`, event_name: 'call', external_customer_id: 'c' })) }

  broker.control(`errors ${PRODUCE_API_KEY} 3 ${MESSAGE_TOO_LARGE}`)
  await new Promise((r) => setTimeout(r, 300))
  const res = await api.post('/v1/events/raw/bulk', batch)
  assert.equal(res.status, 202, JSON.stringify(res.body))
  assert.equal(await counted(api, meter.id, '3'), '3')
  assert.ok(spooled.spool!.forwarder.stats.failures >= 1, 'the forwarder saw the refused produce')
  await eventually(async () => (spooled.spool!.spool.left().batches === 0 ? true : undefined), 'the spool to hold nothing')
})
