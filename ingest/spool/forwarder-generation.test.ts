// committed mode: the forwarder sends nothing before its watch knows the broker's generation.
// A send to a broker whose generation this process never saw could not be told from its
// successor's, and a restart in between would go unnoticed (a chaos run lost events so).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Kafka, logLevel } from 'kafkajs'
import { loadConfig } from '../../platform/config.js'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { startForwarder } from './forwarder.js'
import { Spool } from './spool.js'

const config = loadConfig(process.env)

test('a forwarder whose broker generation is not known yet sends nothing; once it is known, everything goes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'spool-gen-'))
  const spool = await Spool.open({ enabled: true, dir, retainUntil: 'committed', maxBytes: 1 << 30, segmentBytes: 64 * 1024, memoryBytes: 1 << 20, resendAfterMs: 60_000, lingerMs: 0 })
  await spool.append(Array.from({ length: 5 }, (_, i) => ({ key: `g${i}@0`, tenantId: 't1', environmentId: 'e1', events: 1, value: Buffer.from(`v${i}`), partition: 0 })))
  const producer = await createProducer(createKafka(config, 'forwarder-gen'))
  const topic = `forwarder-gen-${process.pid}`
  const log = () => undefined
  try {
    // The watch asks a broker that never answers (the producer's broker is up).
    const silent = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 200 })
    const blind = startForwarder({ spool, producer, topic, partitions: 1, committed: { kafka: silent, groupId: `g-${process.pid}` }, log })
    await new Promise((r) => setTimeout(r, 1500))
    assert.equal(blind.stats.sent, 0, 'nothing sent before the generation is known')
    assert.equal(spool.left().batches, 5)
    await blind.stop()

    const seeing = startForwarder({ spool, producer, topic, partitions: 1, committed: { kafka: createKafka(config, 'forwarder-gen-watch'), groupId: `g-${process.pid}` }, log })
    const until = Date.now() + 20_000
    while (seeing.stats.sent < 5 && Date.now() < until) await new Promise((r) => setTimeout(r, 100))
    assert.equal(seeing.stats.sent, 5)
    await seeing.stop()
  } finally {
    await producer.disconnect()
    await spool.close()
    rmSync(dir, { recursive: true, force: true })
  }
})
