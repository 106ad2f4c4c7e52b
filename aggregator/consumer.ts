// Kafka consumer that materialises meter buckets in ClickHouse: runs the steps of
// pipeline.ts (decode -> write -> commit -> count) per batch, in order per partition, and
// replays a partition from its last commit after a failure (partition-chain.ts). Several
// consumers (processes) may share the group: each writes the shards of its partitions, fenced
// (shard-fence.ts). The in-memory local broker's empty restarts: broker-restarts.ts.
import type { Kafka, Producer } from 'kafkajs'
import type pg from 'pg'
import type { ClickHouse } from '../clickhouse/client.js'
import type { MeterSource } from '../schemas/meters.js'
import type { CommittedWriteListener } from '../schemas/committed-write.js'
import { encodeBatch, type IngestBatch } from '../schemas/events.js'
import { SHARDS, eventShard, partitionOfShard } from '../schemas/shards.js'
import { checkTopicPartitions, createConsumer, GROUP_SESSION_TIMEOUT_MS, TopicLayoutError } from '../platform/kafka.js'
import { addLagCollector } from '../platform/business-metrics.js'
import { watchBrokerGeneration, type GenerationWatch } from '../platform/broker-generation.js'
import type { Backfills, BackfillHooks } from './backfill.js'
import { adoptStale, brokerRestarted, trackFetches } from './broker-restarts.js'
import { CommitMetrics } from './commit-metrics.js'
import type { BatchHooks, ConsumerLog, ConsumerState } from './consumer-state.js'
import { eachBatchOf } from './partition-chain.js'
import type { Reroute, WriteStage, WriteStageHooks, WriteStats } from './write-stage.js'
import type { ShardTable } from './shard-table.js'
import { checkGroupProtocol, WritePathVersionError } from './version-guard.js'
import { OnlineAudit } from './online-audit.js'
import { openWriter } from './writer.js'

export interface AggregatorHooks extends WriteStageHooks, BackfillHooks, BatchHooks {}

export interface AggregatorOptions {
  kafka: Kafka
  ch: ClickHouse
  meters: MeterSource
  /** the aggregator's own Postgres pool (the fence, cuts and backfill leases) */
  pg: pg.Pool
  topic: string
  groupId: string
  /** KAFKA_GROUP_SYNC_DELAY_MS: the group leader's wait before it assigns */
  groupSyncDelayMs: number
  /** partitions of the events topic (KAFKA_EVENTS_PARTITIONS): shard s travels in partition s mod this */
  partitions: number
  meterRefreshMs?: number
  hooks?: AggregatorHooks
  /** the in-memory local broker: watch its generation and read again from 0 after it restarted empty */
  watchBroker?: boolean
  /** the client the generation watch asks (default: `kafka`) */
  generationKafka?: Kafka
  /** told the record bytes each commit covers (all-in-one without the spool: the lag gate) */
  onCommitted?: (committed: { bytes: number }) => void
  onCommittedWrite?: CommittedWriteListener
  /** a name for this writer in logs and the fence (default: host, pid and a random suffix) */
  name?: string
  /** days of event time whose dedup keys are kept (INGEST_MAX_EVENT_AGE_DAYS + 2); 0: forever */
  dedupHorizonDays?: number
  /** minutes of event time whose dedup keys stay in memory (older events are looked up in dedup_events) */
  hotWindowMinutes?: number
  /** the online exactness audit: every `everyMs` (0: off), `samples` closed minutes recounted */
  audit?: { everyMs: number; samples: number }
  log?: (msg: string, err?: unknown) => void
  /** what recovers by itself (a consumer restarted after a broker's protocol answer); default: `log` */
  warn?: (msg: string, err?: unknown) => void
}

export interface Aggregator {
  name: string
  stop(): Promise<void>
  stats: { batches: number; events: number; meterRows: number; duplicates: number }
  write: WriteStats
  /** Resolves once the meter cache has loaded at least once. */
  ready: Promise<void>
  /** Resolves once the consumer first joined its group (a joined member answers the next one's rebalance). */
  joined: Promise<void>
  /** partitions the group assigns to this consumer now */
  readonly assignment: number[]
  backfills: Backfills
  stage: WriteStage
  /** The in-memory broker restarted empty: every assigned partition is read again from 0. */
  brokerRestarted(): void
}

/** kafkajs' round-robin assignment under the write path's own protocol name (version-guard.ts). */
export const ASSIGNER_NAME = 'MeterlineShardsV2'

/** how long a stop waits for a start in progress (a join waits up to a session for the group's members) */
const START_WAIT_MS = GROUP_SESSION_TIMEOUT_MS + 5000

export async function startAggregator(opts: AggregatorOptions): Promise<Aggregator> {
  const log = opts.log ?? ((msg: string, err?: unknown) => console.error(`[aggregator] ${msg}`, err ?? ''))
  const rerouter = rerouterOf(opts)
  const { name, store, meters, stage, shards, backfills } = await openWriter({ ...opts, log, reroute: rerouter.reroute })
  const commitMetrics = new CommitMetrics()
  const removeLagCollector = addLagCollector(() => commitMetrics.collect())
  const c = consumerState(opts, log, stage, commitMetrics)
  trackFetches(c)
  followAssignment(c, shards, opts.partitions)
  const ready = stage.tick()
  await ready
  const joined = joinedOnce(c)
  restartOnCrash(c, opts)
  c.watch = opts.watchBroker ? watchBroker(c, opts) : undefined
  startConsuming(c, opts)
  const stopTimers = startTimers(c, opts, backfills, new OnlineAudit(opts.ch, opts.pg, store, meters, log))
  let stopped: Promise<void> | undefined
  return {
    name,
    stats: c.stats,
    write: stage.stats,
    ready,
    joined,
    backfills,
    stage,
    get assignment() {
      return c.assignment
    },
    brokerRestarted: () => brokerRestarted(c),
    stop() {
      stopped ??= stopAggregator(c, () => {
        stopTimers()
        removeLagCollector()
      }, backfills, rerouter)
      return stopped
    },
  }
}

/** Events of shards this consumer does not hold are sent on by a producer made on first use. */
function rerouterOf(opts: AggregatorOptions): { reroute: Reroute; producer?: Producer } {
  const r: { reroute: Reroute; producer?: Producer } = {
    reroute: async (batch) => {
      r.producer ??= opts.kafka.producer({ allowAutoTopicCreation: true })
      await r.producer.connect()
      await r.producer.send({ topic: opts.topic, acks: -1, messages: rerouted(batch, opts.partitions) })
    },
  }
  return r
}

function consumerState(opts: AggregatorOptions, log: ConsumerLog, stage: WriteStage, commitMetrics: CommitMetrics): ConsumerState {
  const c: ConsumerState = {
    kafka: opts.kafka, topic: opts.topic, groupId: opts.groupId, hooks: opts.hooks, onCommitted: opts.onCommitted, log, stage, commitMetrics,
    consumer: createConsumer(opts.kafka, opts.groupId, () => !c.stopping, { name: ASSIGNER_NAME, syncDelayMs: opts.groupSyncDelayMs }),
    stats: { batches: 0, events: 0, meterRows: 0, duplicates: 0 },
    partitions: new Map(), assignment: [], stopping: false, restarts: 0, batchSeq: 0, fetchStarts: new Map(), running: Promise.resolve(),
  }
  return c
}

/** At each join: the shards of the assigned partitions are this writer's, taken at once. */
function followAssignment(c: ConsumerState, shards: ShardTable, partitions: number): void {
  c.consumer.on(c.consumer.events.GROUP_JOIN, ({ payload }) => {
    c.assignment = [...(payload.memberAssignment[c.topic] ?? [])].sort((a, b) => a - b)
    const owned = new Set(c.assignment)
    const mine = Array.from({ length: SHARDS }, (_, s) => s).filter((s) => owned.has(partitionOfShard(s, partitions)))
    shards.assign(mine)
    for (const p of [...c.partitions.keys()]) if (!owned.has(p)) c.partitions.delete(p)
    c.commitMetrics.retain(c.topic, c.assignment)
    for (const p of c.assignment) {
      if (!c.partitions.has(p)) void adoptStale(c, c.topic, p).catch((err) => c.log(`reading the committed offset of ${c.topic}[${p}] failed; its first batch checks again`, err))
    }
    // Take the shards at once: a writer that holds all it was assigned never claims one later
    // from a stale assignment (a paused consumer that missed a rebalance is refused instead).
    void c.stage.tick().catch((err) => c.log('taking the assigned shards failed; the next write retries', err))
  })
}

/** Resolves once the consumer first joined its group. */
function joinedOnce(c: ConsumerState): Promise<void> {
  let markJoined!: () => void
  const joined = new Promise<void>((r) => (markJoined = r))
  c.consumer.on(c.consumer.events.GROUP_JOIN, () => markJoined())
  return joined
}

async function run(c: ConsumerState, opts: AggregatorOptions): Promise<void> {
  // The broker's generation first: a consumer that reads before it knows one cannot tell an
  // empty restart later (its first answer would be the new generation, seen as no change).
  await c.watch?.ready
  // A stop while starting ends the start at its next step: a consumer that joined after its
  // stop would hold partitions nobody writes for.
  if (c.stopping) return
  await checkTopicPartitions(opts.kafka, opts.topic, opts.partitions)
  await checkGroupProtocol(opts.kafka, opts.groupId, ASSIGNER_NAME)
  if (c.stopping) return
  await c.consumer.connect()
  await c.consumer.subscribe({ topic: opts.topic, fromBeginning: true })
  if (c.stopping) return
  await c.consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 16, eachBatch: eachBatchOf(c) })
}

/** Runs the consumer; a start that fails (or is refused) is tried again. */
function startConsuming(c: ConsumerState, opts: AggregatorOptions): void {
  c.running = run(c, opts).catch((err) => {
    if (c.stopping) return
    const refused = err instanceof WritePathVersionError || err instanceof TopicLayoutError
    c.log(refused ? `aggregator refused to start: ${(err as Error).message}; checking again in 5 s` : 'aggregator consumer failed to start; retrying in 1 s', refused ? undefined : err)
    return new Promise<void>((r) => setTimeout(r, refused ? 5000 : 1000)).then(() => (c.stopping ? undefined : restartConsumer(c, opts)))
  })
}

async function restartConsumer(c: ConsumerState, opts: AggregatorOptions): Promise<void> {
  await c.consumer.disconnect().catch(() => undefined)
  if (!c.stopping) startConsuming(c, opts)
}

function restartOnCrash(c: ConsumerState, opts: AggregatorOptions): void {
  c.consumer.on(c.consumer.events.CRASH, ({ payload }) => {
    if (c.stopping || payload.restart) return
    // A broker's protocol answer (a rebalance raced by a joining member) is recovered by the
    // restart below: an operator sees it, not as an error.
    const report = isBrokerAnswer(payload.error) ? (opts.warn ?? c.log) : c.log
    report('aggregator consumer crashed; restarting it', payload.error)
    setTimeout(() => void restartConsumer(c, opts), 1000)
  })
}

function watchBroker(c: ConsumerState, opts: AggregatorOptions): GenerationWatch {
  return watchBrokerGeneration(opts.generationKafka ?? opts.kafka, (generation) => {
    c.log(`the broker restarted empty (${generation}); reading every assigned partition again from 0`)
    brokerRestarted(c)
  })
}

/** Meter refreshes and backfills between writes, and the online audit; returns what stops them. */
function startTimers(c: ConsumerState, opts: AggregatorOptions, backfills: Backfills, audit: OnlineAudit): () => void {
  const tick = () => {
    void c.stage.tick().catch((err) => c.log('meter refresh failed', err))
    void backfills.tick().catch((err) => c.log('backfill failed', err))
  }
  const timer = setInterval(tick, opts.meterRefreshMs ?? 500)
  timer.unref()
  let auditing: Promise<unknown> | undefined
  const auditTimer = opts.audit?.everyMs
    ? setInterval(() => {
        auditing ??= audit.run(opts.audit!.samples).catch((err) => c.log('usage audit failed', err)).finally(() => (auditing = undefined))
      }, opts.audit.everyMs)
    : undefined
  auditTimer?.unref()
  return () => {
    clearInterval(timer)
    clearInterval(auditTimer)
  }
}

async function stopAggregator(c: ConsumerState, stopTimers: () => void, backfills: Backfills, rerouter: { producer?: Producer }): Promise<void> {
  stopTimers()
  c.commitMetrics.retain(c.topic, [])
  c.stopping = true
  await c.watch?.stop()
  await c.stage.stop()
  await Promise.all([...c.partitions.values()].map((p) => p.chain))
  // A disconnect before `run` resolved can leave kafkajs consuming (tulios/kafkajs#1639): the
  // start in progress ends first (it stops at its next step), within a join's time.
  await Promise.race([c.running, new Promise((r) => setTimeout(r, START_WAIT_MS).unref())])
  await c.consumer.disconnect()
  await backfills.tick().catch(() => undefined)
  await rerouter.producer?.disconnect().catch(() => undefined)
  await c.admin?.disconnect().catch(() => undefined)
}

function isBrokerAnswer(err: unknown): boolean {
  // kafkajs wraps the broker's answer when it gives up on it (a non-retriable code, or retries spent)
  for (let e = err as { name?: string; cause?: unknown } | undefined, depth = 0; e && depth < 4; e = e.cause as typeof e, depth++) {
    if (e.name === 'KafkaJSProtocolError') return true
  }
  return false
}

/** A record's events split by the partition of their shard (the owners' partitions). */
function rerouted(batch: IngestBatch, partitions: number): { key: string; value: Buffer; partition: number; headers: Record<string, string> }[] {
  const byPartition = new Map<number, IngestBatch>()
  for (const e of batch.events) {
    const p = partitionOfShard(eventShard(batch.tenant_id, batch.environment_id, e.event_id), partitions)
    const b = byPartition.get(p) ?? { ...batch, events: [] }
    b.events.push(e)
    byPartition.set(p, b)
  }
  return [...byPartition].map(([partition, b]) => ({
    key: `${batch.batch_id}@${partition}`, value: encodeBatch(b), partition,
    headers: { tenant_id: batch.tenant_id, environment_id: batch.environment_id },
  }))
}
