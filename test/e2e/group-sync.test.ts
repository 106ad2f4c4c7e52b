// The local broker (librdkafka's mock) ends a rebalance at the group leader's SyncGroup and
// refuses (INVALID_REQUEST) a member's SyncGroup that arrives after it. kafkajs crashes that
// consumer, its restart rejoins, and the whole group rebalances again: aggregator processes
// under load took 42 s, and in the chaos run up to 141 s, to settle. The leader's wait
// (KAFKA_GROUP_SYNC_DELAY_MS) lets the members' SyncGroups arrive first.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import net from 'node:net'
import { randomBytes } from 'node:crypto'
import { Kafka, logLevel, type Consumer, type ISocketFactory } from 'kafkajs'
import { ASSIGNER_NAME } from '../../aggregator/consumer.js'
import { createConsumer, createProducer } from '../../platform/kafka.js'
import { eventually, testConfig } from '../support/platform.js'

const SYNC_GROUP = 14
/** how late the slow member's SyncGroup reaches the broker */
const SLOW_SYNC_MS = 400

/** kafkajs' socket, except that every SyncGroup request (and what follows it) is written `delayMs` late. */
const lateSyncSockets = (delayMs: number): ISocketFactory => ({ host, port, onConnect }) => {
  const socket = net.connect({ host, port }, onConnect)
  const write = socket.write.bind(socket) as (data: Buffer, encoding?: BufferEncoding) => boolean
  let queue = Promise.resolve()
  socket.write = ((data: Buffer, encoding?: BufferEncoding) => {
    const late = Buffer.isBuffer(data) && data.length >= 6 && data.readInt16BE(4) === SYNC_GROUP
    queue = queue.then(() => (late ? new Promise((r) => setTimeout(r, delayMs)) : undefined)).then(() => void write(data, encoding))
    return true
  }) as typeof socket.write
  return socket
}

interface Member { consumer: Consumer; assignment: number[]; crashes: string[] }

async function member(config: ReturnType<typeof testConfig>, kafka: Kafka, groupId: string, topic: string): Promise<Member> {
  // kafkajs does not restart a crashed consumer here: a crash is the failure this test looks for.
  const consumer = createConsumer(kafka, groupId, () => false, { name: ASSIGNER_NAME, syncDelayMs: config.kafkaGroupSyncDelayMs })
  const m: Member = { consumer, assignment: [], crashes: [] }
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => (m.assignment = [...(payload.memberAssignment[topic] ?? [])]))
  consumer.on(consumer.events.CRASH, ({ payload }) => m.crashes.push(payload.error.message))
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  await consumer.run({ eachBatch: async () => undefined })
  return m
}

test('a member whose SyncGroup reaches the broker after the leader\'s joins the group without a crash', async () => {
  const config = testConfig()
  const id = randomBytes(4).toString('hex')
  const topic = `group-sync-${id}`
  const groupId = `group-sync-${id}`
  // The broker creates the topic (4 partitions) on first use.
  const producer = await createProducer(new Kafka({ clientId: 'group-sync', brokers: config.kafkaBrokers, logLevel: logLevel.NOTHING }))
  await producer.send({ topic, messages: [{ value: 'x' }] })
  await producer.disconnect()

  // The first member is the group's leader in every rebalance after this one.
  const leader = await member(config, new Kafka({ clientId: 'leader', brokers: config.kafkaBrokers, logLevel: logLevel.NOTHING }), groupId, topic)
  const slow = { current: undefined as Member | undefined }
  try {
    await eventually(async () => (leader.assignment.length === 4 ? true : undefined), 'the leader alone holding the 4 partitions')
    slow.current = await member(config, new Kafka({ clientId: 'slow', brokers: config.kafkaBrokers, logLevel: logLevel.NOTHING, socketFactory: lateSyncSockets(SLOW_SYNC_MS) }), groupId, topic)
    const s = slow.current
    const settled = () => s.crashes.length > 0 || (s.assignment.length > 0 && leader.assignment.length + s.assignment.length === 4)
    await eventually(async () => (settled() ? true : undefined), 'both members holding partitions, or a crash', 60_000)
    assert.deepEqual([...leader.crashes, ...s.crashes], [], 'no member crashed')
    assert.deepEqual([...leader.assignment, ...s.assignment].sort(), [0, 1, 2, 3], 'each partition held once')
  } finally {
    await slow.current?.consumer.disconnect()
    await leader.consumer.disconnect()
  }
})
