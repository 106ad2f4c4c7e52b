// An aggregator consumer reads nothing before its watch knows the local broker's generation.
// Its first answer would otherwise be taken as the generation it had been reading all along:
// an empty restart in between would go unnoticed, and the positions of the old broker would
// skip the new broker's first records (a 30-minute chaos run lost 18 events so).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { Kafka, logLevel } from 'kafkajs'
import { eventually, startTestPlatform, testConfig, type TestPlatform } from '../support/platform.js'
import { created, ingestAll, usage } from '../support/fixtures.js'
import { groupAggregator } from '../support/group-aggregator.js'

let p: TestPlatform
before(async () => {
  // Without the spool the 202 comes after Kafka's ack: the records are in the topic when ingest answers.
  p = await startTestPlatform({ config: { spool: { ...testConfig().spool, enabled: false } } })
})
after(async () => {
  await p?.stop()
})

test('a consumer whose broker generation is not known yet reads nothing; once it is known, everything is counted', async () => {
  const { api } = await p.newTenant()
  const m = await created(api.post('/v1/meters', { name: 'calls', event_name: 'calls', aggregation: { type: 'COUNT' } }))
  await p.aggregator!.stop()
  await ingestAll(api, Array.from({ length: 30 }, (_, i) => ({
    event_id: `g${i}`, event_name: 'calls', external_customer_id: 'c1', timestamp: '2026-10-15T12:00:00Z', properties: {},
  })))

  // The watch asks a broker that never answers; the consumer's own broker is up.
  const silent = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 200 })
  // A group of its own: the platform's stopped consumers are no members that a join would wait for.
  const groupId = `${p.config.aggregatorGroupId}-own`
  const blind = await groupAggregator(p, 'blind', { watchBroker: true, generationKafka: silent, name: 'blind', groupId })
  // Long enough for a consumer to join a group of its own and read (about 3 s here).
  await new Promise((r) => setTimeout(r, 8000))
  assert.equal(blind.stats.events, 0, 'nothing read before the generation is known')
  assert.deepEqual(blind.assignment, [], 'not even a member of the group')
  assert.equal((await usage(api, m.id, {})).value, '0')
  await blind.stop()

  const seeing = await groupAggregator(p, 'seeing', { watchBroker: true, name: 'seeing', groupId })
  try {
    await eventually(async () => ((await usage(api, m.id, {})).value === '30' ? true : undefined), 'all 30 counted', 90_000)
    // Its commit follows the write: the count is in its figures once the offsets are committed.
    await eventually(async () => (seeing.stats.events >= 30 ? true : undefined), 'the commit of the 30 events')
    assert.equal(seeing.stats.events, 30, 'each of the 30 events counted once by the consumer that knows the generation')
  } finally {
    await seeing.stop()
  }
})
