// The one module that owns Kafka: client, producer and consumer factories.
import { Kafka, PartitionAssigners, logLevel, type Admin, type Consumer, type logCreator, type PartitionAssigner, type Producer } from 'kafkajs'
import type { Config } from './config.js'
import { kafkaRequestTimeouts } from './metrics.js'

/**
 * kafkajs' own console lines, except that a request refused because the group is rebalancing
 * (an offset commit, a heartbeat) is a warning, not an error: the group settles, and what was not
 * committed is read again and counted once (the write path). A start with a backlog logged
 * dozens of them as errors.
 */
export const kafkaLogCreator: logCreator = () => ({ namespace, level, label, log }) => {
  const error = (log as { error?: unknown }).error
  const settling = level === logLevel.ERROR && typeof error === 'string' && /rebalanc/i.test(error)
  const line = JSON.stringify({ ...log, level: settling ? 'WARN' : label, message: `${namespace ? `[${namespace}] ` : ''}${String(log.message)}` })
  if (level === logLevel.ERROR && !settling) console.error(line)
  else if (level === logLevel.ERROR || level === logLevel.WARN) console.warn(line)
  else console.info(line)
}

export function createKafka(config: Pick<Config, 'kafkaBrokers' | 'kafkaClientId'>, clientSuffix: string): Kafka {
  return new Kafka({
    clientId: `${config.kafkaClientId}-${clientSuffix}`,
    brokers: config.kafkaBrokers,
    logLevel: logLevel.ERROR,
    logCreator: kafkaLogCreator,
    // Short, capped backoff: after a broker restart (same address) clients are back within ~2 s.
    retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 8 },
  })
}

/** acks=-1 on every send: a produce resolves only when all in-sync replicas have the records. */
export async function createProducer(kafka: Kafka): Promise<Producer> {
  const producer = kafka.producer({ allowAutoTopicCreation: true })
  producer.on(producer.events.REQUEST_TIMEOUT, ({ payload }) => reportRequestTimeout('producer', payload))
  await producer.connect()
  return producer
}

/** `keepRunning`: asked after a crash; kafkajs restarts the consumer only while it says yes (not while stopping). */
/** a consumer silent this long leaves the group (and a rebalance follows) */
export const GROUP_SESSION_TIMEOUT_MS = 10_000

/** The group protocol a consumer offers: kafkajs' round-robin under `name`; its leader waits `syncDelayMs` before it assigns. */
export interface GroupAssigner {
  name: string
  syncDelayMs: number
}

export function createConsumer(kafka: Kafka, groupId: string, keepRunning: () => boolean = () => true, assigner?: GroupAssigner): Consumer {
  const consumer = kafka.consumer({
    groupId,
    ...(assigner ? { partitionAssigners: [namedRoundRobin(assigner)] } : {}),
    retry: { initialRetryTime: 100, maxRetryTime: 2000, retries: 8, restartOnFailure: async () => keepRunning() },
    allowAutoTopicCreation: true,
    // After a crash the broker keeps the dead member until its session times out, and the
    // restarted aggregator cannot join before: keep that wait short.
    sessionTimeout: GROUP_SESSION_TIMEOUT_MS,
    heartbeatInterval: 2_000,
    maxBytesPerPartition: 4 * 1024 * 1024,
    maxBytes: 16 * 1024 * 1024,
    // Let the broker gather up to 256 KB per fetch (or 100 ms): fewer, larger batches.
    minBytes: 1,
    maxWaitTimeInMs: 100,
  })
  consumer.on(consumer.events.REQUEST_TIMEOUT, ({ payload }) => reportRequestTimeout('consumer', payload))
  return consumer
}

interface RequestTimeout { apiName: string; broker: string; clientId: string; sentAt: number; pendingDuration: number }

/**
 * kafkajs retries a request that got no answer within its timeout (30 s) without a log line
 * at our level, so such a stall showed only as freshness: a warning and a count instead.
 */
export function reportRequestTimeout(client: 'producer' | 'consumer', t: RequestTimeout): void {
  kafkaRequestTimeouts.inc({ client, api: t.apiName })
  kafkaLogCreator(logLevel.WARN)({
    namespace: '', level: logLevel.WARN, label: 'WARN',
    log: {
      timestamp: new Date().toISOString(), logger: 'kafkajs', clientId: t.clientId, pendingDuration: t.pendingDuration,
      message: `${t.apiName} request to ${t.broker} got no answer for ${Date.now() - t.sentAt} ms; kafkajs retries it`,
    },
  })
}

/**
 * kafkajs' round-robin assigner under another group protocol name (members of different names
 * never share a group). The leader sends its SyncGroup `syncDelayMs` late: the local broker
 * (librdkafka's mock) ends a rebalance at the leader's SyncGroup and refuses every member's that
 * comes after it (INVALID_REQUEST), and kafkajs then restarts that consumer, which starts the
 * whole rebalance again. A real Kafka waits for the leader, so 0 there.
 */
function namedRoundRobin({ name, syncDelayMs }: GroupAssigner): PartitionAssigner {
  return (config) => {
    const roundRobin = PartitionAssigners.roundRobin(config)
    return {
      ...roundRobin,
      name,
      assign: async (group) => {
        if (syncDelayMs > 0) await new Promise((r) => setTimeout(r, syncDelayMs))
        return roundRobin.assign(group)
      },
    }
  }
}

/**
 * The events topic must have exactly KAFKA_EVENTS_PARTITIONS partitions: events are routed to
 * partition (shard mod that count), and a writer holds the shards of its partitions. Resolves
 * when it does; otherwise throws with a message an operator can act on.
 */
export async function checkTopicPartitions(kafka: Kafka, topic: string, expected: number): Promise<void> {
  const admin = kafka.admin({ retry: { retries: 2 } })
  try {
    await admin.connect()
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] })
    const actual = topics[0]?.partitions.length ?? 0
    if (actual !== expected) {
      throw new TopicLayoutError(
        `topic ${topic} has ${actual} partitions but KAFKA_EVENTS_PARTITIONS is ${expected}; create the topic with ${expected} partitions or set the variable to ${actual} (every ingest and aggregator process alike)`,
      )
    }
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
}

export class TopicLayoutError extends Error {}

/** Per partition of `topic`: its end offset (next offset to be written) and `groupId`'s committed offset (-1: none). */
export interface PartitionProgress {
  partition: number
  high: bigint
  low: bigint
  committed: bigint
}

/** One admin connection per call site; reads the topic's end offsets, then the group's commits (in that order). */
export async function readConsumerProgress(admin: Admin, topic: string, groupId: string): Promise<PartitionProgress[]> {
  const ends = await admin.fetchTopicOffsets(topic)
  const [group] = await admin.fetchOffsets({ groupId, topics: [topic] })
  const committed = new Map((group?.partitions ?? []).map((p) => [p.partition, BigInt(p.offset)]))
  return ends.map((e) => ({ partition: e.partition, high: BigInt(e.high), low: BigInt(e.low), committed: committed.get(e.partition) ?? -1n }))
}
