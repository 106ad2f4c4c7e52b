// Nothing is counted twice: duplicate event_ids, a Kafka record produced twice, and an
// aggregator that dies between its ClickHouse insert and its offset commit.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { encodeBatch } from '../../schemas/events.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { created, ingestAll, usage } from '../support/fixtures.js'
import { groupAggregator } from '../support/group-aggregator.js'

let p: TestPlatform
let crash = false
let crashes = 0

before(async () => {
  p = await startTestPlatform({
    aggregatorHooks: {
      afterInsert: () => {
        if (crash) {
          crashes++
          throw new Error('simulated crash between ClickHouse insert and offset commit')
        }
      },
    },
  })
})
after(async () => {
  await p?.stop()
})

const ev = (id: string, tokens: number, customer = 'c1') => ({
  event_id: id, event_name: 'tokens', external_customer_id: customer, timestamp: '2026-10-15T12:00:00Z', properties: { tokens },
})

async function settled(api: any, meterId: string, expectCount: number) {
  return eventually(async () => {
    const u = await usage(api, meterId, {})
    return u.event_count === expectCount ? u : undefined
  }, `${expectCount} events counted`)
}

test('duplicate event_ids, within a request and across requests, count once', async () => {
  const { api } = await p.newTenant()
  const m = await created(api.post('/v1/meters', { name: 't', event_name: 'tokens', aggregation: { type: 'SUM', field: 'tokens' } }))
  await ingestAll(api, [ev('a', 1), ev('b', 2), ev('a', 1)])
  await ingestAll(api, [ev('b', 2), ev('c', 4)])
  // The same whole request, sent twice (a client retry after a lost response).
  const batch = [ev('d', 8), ev('e', 16)]
  await ingestAll(api, batch)
  await ingestAll(api, batch)
  const u = await settled(api, m.id, 5)
  assert.equal(u.value, '31')
  // Nothing arrives later to change it: one more marker event, then re-check.
  await ingestAll(api, [ev('f', 32)])
  assert.equal((await settled(api, m.id, 6)).value, '63')
})

test('a Kafka record produced twice (producer retry after a lost ack) counts once', async () => {
  const { api, tenantId, environments } = await p.newTenant()
  const m = await created(api.post('/v1/meters', { name: 't', event_name: 'tokens', aggregation: { type: 'SUM', field: 'tokens' } }))
  const producer = await createProducer(createKafka(p.config, 'test-dup'))
  try {
    const record = encodeBatch({
      batch_id: 'dup-batch', tenant_id: tenantId, environment_id: environments.production, ingested_at: Date.parse('2026-10-15T12:00:01Z'),
      events: [1, 2, 3].map((i) => ({
        event_id: `k${i}`, event_name: 'tokens', external_customer_id: 'c1', customer_id: null,
        timestamp: Date.parse('2026-10-15T12:00:00Z'), source: null, properties: JSON.stringify({ tokens: i * 10 }),
      })),
    })
    await producer.send({ topic: p.config.eventsTopic, acks: -1, messages: [{ key: 'dup-batch', value: record }] })
    await producer.send({ topic: p.config.eventsTopic, acks: -1, messages: [{ key: 'dup-batch', value: record }] })
  } finally {
    await producer.disconnect()
  }
  await ingestAll(api, [ev('marker', 1)])
  const u = await settled(api, m.id, 4)
  assert.equal(u.value, '61')
})

test('an aggregator killed between insert and commit replays its batch without changing any total', async () => {
  const { api } = await p.newTenant()
  const sum = await created(api.post('/v1/meters', { name: 'sum', event_name: 'tokens', aggregation: { type: 'SUM', field: 'tokens' } }))
  const count = await created(api.post('/v1/meters', { name: 'count', event_name: 'tokens', aggregation: { type: 'COUNT' } }))
  await ingestAll(api, Array.from({ length: 2000 }, (_, i) => ev(`pre-${i}`, 1)))
  assert.equal((await settled(api, sum.id, 2000)).value, '2000')

  crash = true
  await ingestAll(api, Array.from({ length: 1000 }, (_, i) => ev(`mid-${i}`, 2)))
  // The rows reached ClickHouse, but the offset was never committed.
  assert.equal((await settled(api, sum.id, 3000)).value, '4000')
  await eventually(async () => (crashes > 0 ? true : undefined), 'the crash hook to fire')
  await p.aggregator!.stop()
  crash = false

  // A new aggregator in the same consumer group re-reads everything after the last commit.
  const restarted = await groupAggregator(p, 'aggregator-restarted')
  try {
    await eventually(async () => (restarted.stats.events >= 1000 ? true : undefined), 'the uncommitted batch to be replayed')
    assert.equal((await usage(api, sum.id, {})).value, '4000')
    assert.equal((await usage(api, count.id, {})).value, '3000')
    // And the pipeline still moves forward after the restart.
    await ingestAll(api, [ev('post-1', 5)])
    assert.equal((await settled(api, sum.id, 3001)).value, '4005')
    assert.equal((await usage(api, count.id, {})).value, '3001')
  } finally {
    await restarted.stop()
  }
})

test('an aggregator whose insert fails once rewinds to its last commit by itself and loses nothing', async () => {
  const { api } = await p.newTenant()
  const sum = await created(api.post('/v1/meters', { name: 'sum', event_name: 'tokens', aggregation: { type: 'SUM', field: 'tokens' } }))
  // The platform's aggregator is replaced by one with a one-shot failure after its first write
  // (one consumer group writes one ClickHouse database: docs/architecture.md).
  await p.aggregator!.stop()
  let failures = 0
  const flaky = await groupAggregator(p, 'aggregator-flaky', {
    hooks: {
      afterInsert: () => {
        if (failures === 0) {
          failures++
          throw new Error('transient ClickHouse failure')
        }
      },
    },
  })
  try {
    await ingestAll(api, Array.from({ length: 3000 }, (_, i) => ev(`flaky-${i}`, 3)))
    const before = flaky.stats.events
    await eventually(async () => (flaky.stats.events - before >= 3000 ? true : undefined), 'the flaky consumer to commit everything')
    assert.equal(failures, 1)
    assert.equal((await settled(api, sum.id, 3000)).value, '9000')
  } finally {
    await flaky.stop()
  }
})
