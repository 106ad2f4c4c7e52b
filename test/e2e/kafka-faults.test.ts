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
let bounded: TestPlatform
const BOUND = 1024 * 1024
before(async () => {
  broker = await startPrivateBroker()
  const base = testConfig()
  direct = await startTestPlatform({ config: { kafkaBrokers: [broker.bootstrap], eventsTopic: 'events', spool: { ...base.spool, enabled: false } } })
  spooled = await startTestPlatform({ config: { kafkaBrokers: [broker.bootstrap], eventsTopic: 'events-spooled' } })
  const b = testConfig()
  bounded = await startTestPlatform({ config: { ...b, kafkaBrokers: [broker.bootstrap], eventsTopic: 'events-bounded', spool: { ...b.spool, maxBytes: BOUND } } })
})
after(async () => {
  await direct?.stop()
  await spooled?.stop()
  await bounded?.stop()
  await broker?.stop()
})

const PRODUCE_API_KEY = 0
const MESSAGE_TOO_LARGE = 10 // not retriable: kafkajs gives up at once

/**
 * After a broker outage the count catches up once kafkajs has reconnected, which on a loaded
 * machine (CI runs two test files at once) can take longer than the usual 30 s; a timeout names
 * the last count seen. The count must then hold: a spool resend or a replay that counted
 * again would raise it after the first match, so it is read again after the spool is empty and
 * the resend window has passed.
 */
async function counted(platform: TestPlatform, api: any, meterId: string, value: string, timeoutMs = 90_000) {
  await eventually(async () => {
    const u = await usage(api, meterId, {})
    if (u.value !== value) throw new Error(`counted ${u.value} so far`)
    return u.value
  }, `${value} events counted`, timeoutMs)
  if (platform.spool) await eventually(async () => (platform.spool!.spool.left().batches === 0 ? true : undefined), 'the spool to hold nothing', timeoutMs)
  await new Promise((r) => setTimeout(r, 3000))
  return (await usage(api, meterId, {})).value as string
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
  assert.equal(await counted(direct, api, meter.id, '4'), '4')
})

test('spool on: refused produces are retried by the forwarder; the batch is accepted and counts once', async () => {
  const { api } = await spooled.newTenant()
  const meter = await created(api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const batch = { events: [1, 2, 3].map((i) => ({ event_id: `e${i}`, event_name: 'call', external_customer_id: 'c' })) }

  broker.control(`errors ${PRODUCE_API_KEY} 3 ${MESSAGE_TOO_LARGE}`)
  await new Promise((r) => setTimeout(r, 300))
  const res = await api.post('/v1/events/raw/bulk', batch)
  assert.equal(res.status, 202, JSON.stringify(res.body))
  assert.equal(await counted(spooled, api, meter.id, '3'), '3')
  assert.ok(spooled.spool!.forwarder.stats.failures >= 1, 'the forwarder saw the refused produce')
  await eventually(async () => (spooled.spool!.spool.left().batches === 0 ? true : undefined), 'the spool to hold nothing')
})

// The topology on purpose: three platforms in one process, each with its own topic, consumer
// group and ClickHouse database (one aggregator group writes one database; they share the chDB
// engine only). The double count this test once saw (22,500 for 14,000) came from three
// aggregators backfilling and deduplicating one database each on its own.
test('broker down: ingest accepts into the spool up to SPOOL_MAX_BYTES, then answers 503 with Retry-After; all of it counts once the broker is back', async () => {
  const { api } = await bounded.newTenant()
  const meter = await created(api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  broker.control('down')
  await new Promise((r) => setTimeout(r, 300))
  let accepted = 0
  let refused: Awaited<ReturnType<typeof api.post>> | undefined
  let retryAfter: string | null = null
  for (let i = 0; i < 200 && !refused; i++) {
    const events = Array.from({ length: 500 }, (_, j) => ({ event_id: `b${i}-${j}`, event_name: 'call', external_customer_id: 'c', properties: { pad: 'x'.repeat(40) } }))
    const res = await fetch(`${bounded.url}/v1/events/raw/bulk`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': api.apiKey! }, body: JSON.stringify({ events }) })
    const body = await res.json()
    if (res.status === 202) accepted += events.length
    else {
      refused = { status: res.status, body }
      retryAfter = res.headers.get('retry-after')
    }
  }
  assert.ok(accepted > 0, 'accepted into the spool while the broker was down')
  assert.ok(refused, 'refused once the spool was full')
  assertError(refused, 503, 'service_unavailable', /spool is full/)
  assert.equal(retryAfter, '5')
  assert.ok(bounded.spool!.spool.bytes <= BOUND)
  broker.control('up')
  assert.equal(await counted(bounded, api, meter.id, String(accepted)), String(accepted))
})
