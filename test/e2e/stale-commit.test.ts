// A committed offset made on another generation of the local broker is not a position on this
// one. A consumer that had not yet noticed an empty restart reads the new broker from its old
// offset and commits there under the old generation's name; the consumer that gets the partition
// next must read it again from 0, or the records below that offset are never counted (and the
// spool, once a later commit under the new name passes them, releases them: lost).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { ASSIGNER_NAME, type Aggregator } from '../../aggregator/consumer.js'
import { createConsumer, createKafka } from '../../platform/kafka.js'
import { GENERATION_TOPIC, watchBrokerGeneration } from '../../platform/broker-generation.js'
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

const ev = (id: string) => ({
  event_id: id, event_name: 'calls', external_customer_id: 'c1', timestamp: '2026-10-15T12:00:00Z', properties: {},
})

/** Each partition's end offset. */
async function endOffsets(): Promise<Map<number, string>> {
  const admin = createKafka(p.config, 'stale-commit-admin').admin()
  await admin.connect()
  try {
    const offsets = await admin.fetchTopicOffsets(p.config.eventsTopic)
    assert.ok(offsets.some((o) => o.high !== '0'), 'the events are in the topic')
    return new Map(offsets.map((o) => [o.partition, o.high]))
  } finally {
    await admin.disconnect()
  }
}

/** Commits the given offsets in the aggregator's group, as a member would, naming `generation`. */
async function commitAs(generation: string, ends: Map<number, string>): Promise<void> {
  const consumer = createConsumer(createKafka(p.config, 'stale-committer'), p.config.aggregatorGroupId, () => true, { name: ASSIGNER_NAME, syncDelayMs: p.config.kafkaGroupSyncDelayMs })
  await consumer.connect()
  await consumer.subscribe({ topic: p.config.eventsTopic, fromBeginning: true })
  const done = new Set<number>()
  const all = new Promise<void>((resolve) => {
    void consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        const end = ends.get(batch.partition)
        if (end === undefined || done.has(batch.partition)) return
        await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: end, metadata: generation }])
        done.add(batch.partition)
        if ([...ends].every(([partition, high]) => high === '0' || done.has(partition))) resolve()
      },
    })
  })
  await all
  await consumer.disconnect()
}

async function currentGeneration(): Promise<string> {
  const watch = watchBrokerGeneration(createKafka(p.config, 'stale-commit-watch'), () => undefined)
  try {
    const name = await watch.read()
    assert.ok(name?.startsWith(GENERATION_TOPIC), 'the local broker names its generation')
    return name as string
  } finally {
    await watch.stop()
  }
}

const aggregator = (name: string): Promise<Aggregator> => groupAggregator(p, name, { watchBroker: true, name })

test('offsets committed under another broker generation are read again from 0; offsets of this one are trusted', async () => {
  const { api } = await p.newTenant()
  const m = await created(api.post('/v1/meters', { name: 'calls', event_name: 'calls', aggregation: { type: 'COUNT' } }))
  // The platform's own aggregator must not read them: the group's position is what is tested.
  await p.aggregator!.stop()
  await ingestAll(api, Array.from({ length: 40 }, (_, i) => ev(`old-${i}`)))
  const ends = await endOffsets()
  await commitAs(`${GENERATION_TOPIC}1.stale`, ends)

  let next: Aggregator | undefined = await aggregator('after-stale-commit')
  try {
    // Before the fix this stayed at 0: the consumer began at the stale offsets.
    await eventually(async () => ((await usage(api, m.id, {})).value === '40' ? true : undefined), 'the 40 events below the stale offsets to be counted')
    const generation = await currentGeneration()
    // Its own commits name this generation...
    await eventually(async () => {
      const admin = createKafka(p.config, 'stale-commit-check').admin()
      await admin.connect()
      try {
        const [t] = await admin.fetchOffsets({ groupId: p.config.aggregatorGroupId, topics: [p.config.eventsTopic] })
        const touched = t.partitions.filter((x) => ends.get(x.partition) !== '0')
        return touched.every((x) => x.offset === ends.get(x.partition) && x.metadata === generation) ? true : undefined
      } finally {
        await admin.disconnect()
      }
    }, 'commits under the current generation')
    await next.stop()
    next = undefined

    // ...and a position committed on this generation is trusted: a consumer starting there does
    // not read the partition again (the 40 are not read, the new 5 are).
    await ingestAll(api, Array.from({ length: 5 }, (_, i) => ev(`new-${i}`)))
    next = await aggregator('after-current-commit')
    await eventually(async () => ((await usage(api, m.id, {})).value === '45' ? true : undefined), '45 events counted')
    await eventually(async () => (next!.stats.events >= 5 ? true : undefined), 'the 5 new events read')
    assert.equal(next.stats.events, 5, 'only the records after the trusted commit were read')
  } finally {
    await next?.stop()
  }
})
