// Kafka consumer that materialises meter buckets in ClickHouse: runs the steps of
// pipeline.ts (decode -> write -> commit -> count) per batch, in order per partition, and
// replays a partition from its last commit after a failure. Several consumers (processes) may
// share the group: each writes the shards of its partitions, fenced (shard-fence.ts).
import type { Admin, Consumer, EachBatchPayload, Kafka, Producer } from 'kafkajs'
import type pg from 'pg'
import type { ClickHouse } from '../clickhouse/client.js'
import type { MeterSource } from '../schemas/meters.js'
import type { CommittedWriteListener } from '../schemas/committed-write.js'
import { encodeBatch, type IngestBatch } from '../schemas/events.js'
import { SHARDS, eventShard, partitionOfShard } from '../schemas/shards.js'
import { checkTopicPartitions, createConsumer, TopicLayoutError } from '../platform/kafka.js'
import { aggregatorConsumerLag } from '../platform/metrics.js'
import { addLagCollector } from '../platform/business-metrics.js'
import { watchBrokerGeneration, type GenerationWatch } from '../platform/broker-generation.js'
import type { Backfills, BackfillHooks } from './backfill.js'
import { CommitMetrics } from './commit-metrics.js'
import { commit, count, decode, write } from './pipeline.js'
import type { Piece, PieceResult, WriteStage, WriteStageHooks, WriteStats } from './write-stage.js'
import { checkGroupProtocol, WritePathVersionError } from './version-guard.js'
import { OnlineAudit } from './online-audit.js'
import { openWriter } from './writer.js'

export interface AggregatorHooks extends WriteStageHooks, BackfillHooks {
  /** Called after the ClickHouse writes and before the offset commit (fault-injection point for tests). */
  afterInsert?: (info: { partition: number; lastOffset: string; events: number }) => Promise<void> | void
  /** Called as a fetched batch is handed over; `seq` numbers the batches this consumer handled */
  beforeBatch?: (info: { partition: number; fetchedOffset: string; seq: number }) => void
  /** Called after a batch's offsets were committed */
  afterCommit?: (info: { partition: number; seq: number }) => void
}

export interface AggregatorOptions {
  kafka: Kafka
  ch: ClickHouse
  meters: MeterSource
  /** the aggregator's own Postgres pool (the fence, cuts and backfill leases) */
  pg: pg.Pool
  topic: string
  groupId: string
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

/** the broker generation a piece was fetched in */
interface Fetched {
  restarts: number
  /** the batch's number (hooks) */
  seq: number
  /** the local broker's generation topic (null: a broker without one) */
  name: string | null
}

/** fetched pieces per partition that may wait for their writes */
const LOOKAHEAD = 16

/** kafkajs' round-robin assignment under the write path's own protocol name (version-guard.ts). */
export const ASSIGNER_NAME = 'MeterlineShardsV2'

export async function startAggregator(opts: AggregatorOptions): Promise<Aggregator> {
  const log = opts.log ?? ((msg: string, err?: unknown) => console.error(`[aggregator] ${msg}`, err ?? ''))
  let producer: Producer | undefined
  const { name, store, meters, stage, shards, backfills } = await openWriter({
    ...opts,
    log,
    reroute: async (batch) => {
      producer ??= opts.kafka.producer({ allowAutoTopicCreation: true })
      await producer.connect()
      await producer.send({ topic: opts.topic, acks: -1, messages: rerouted(batch, opts.partitions) })
    },
  })
  const stats = { batches: 0, events: 0, meterRows: 0, duplicates: 0 }
  const commitMetrics = new CommitMetrics()
  const removeLagCollector = addLagCollector(() => commitMetrics.collect())
  const consumer: Consumer = createConsumer(opts.kafka, opts.groupId, () => !stopping, ASSIGNER_NAME)
  let assignment: number[] = []

  interface PartitionState {
    chain: Promise<void>
    next: bigint | null
    /** commits of fetched pieces not yet done, oldest first (the look-ahead) */
    inflight: Promise<void>[]
    /** a re-read from the last commit is under way */
    rewinding?: boolean
  }
  const partitions = new Map<number, PartitionState>()
  let stopping = false
  /** broker restarts seen (a piece fetched before one is not committed) */
  let restarts = 0
  let batchSeq = 0
  /**
   * The restarts seen when each broker node's fetch in progress began. kafkajs hands a fetch's
   * batches over before that node's next fetch starts, so a batch handed over now was fetched
   * under the oldest of these: one fetched before a restart the watch noticed since is tagged
   * with the count before it, whenever it is handed over (a broker seconds old returns batches
   * from offset 0, just like the re-read of the new one). A node that stopped fetching (gone
   * after a restart) is forgotten after a minute; a fetch's batches are handed over within
   * milliseconds of its answer.
   */
  const fetchStarts = new Map<number, { restarts: number; at: number }>()
  consumer.on(consumer.events.FETCH_START, ({ payload }) => void fetchStarts.set(payload.nodeId, { restarts, at: Date.now() }))
  const fetchedUnder = () => {
    const recent = Date.now() - 60_000
    return Math.min(restarts, ...[...fetchStarts.values()].filter((f) => f.at > recent).map((f) => f.restarts))
  }
  /** the broker's generation watch (set below, once the consumer runs) */
  const broker: { watch?: GenerationWatch } = {}

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    assignment = [...(payload.memberAssignment[opts.topic] ?? [])].sort((a, b) => a - b)
    const owned = new Set(assignment)
    const mine = Array.from({ length: SHARDS }, (_, s) => s).filter((s) => owned.has(partitionOfShard(s, opts.partitions)))
    shards.assign(mine)
    for (const p of [...partitions.keys()]) if (!owned.has(p)) partitions.delete(p)
    commitMetrics.retain(opts.topic, assignment)
    for (const p of assignment) {
      if (!partitions.has(p)) void adoptStale(opts.topic, p).catch((err) => log(`reading the committed offset of ${opts.topic}[${p}] failed; its first batch checks again`, err))
    }
    // Take the shards at once: a writer that holds all it was assigned never claims one later
    // from a stale assignment (a paused consumer that missed a rebalance is refused instead).
    void stage.tick().catch((err) => log('taking the assigned shards failed; the next write retries', err))
  })

  async function persist(topic: string, partition: number, piece: Piece, bytes: number, written: Promise<PieceResult>, generation: Fetched) {
    const state = partitions.get(partition)
    if (!state) throw new Error(`partition ${partition} is no longer assigned to this consumer`)
    const result = await written
    if (result.takenOver) {
      throw new Error(`${result.takenOver} events of shards another writer took over; their offsets are its to commit`)
    }
    await opts.hooks?.afterInsert?.({ partition, lastOffset: piece.last.toString(), events: result.events })
    if (state.next !== null && piece.first > state.next) {
      // A gap: the records before this piece were not written. A failure's replay is on its way,
      // or a seek was lost (one after a broker restart, while the consumer was down): read the
      // partition again from the last commit, once per gap, rather than wait for ever.
      if (!state.rewinding) {
        state.rewinding = true
        void rewind(topic, partition, new Error(`offsets ${state.next}..${piece.first - 1n} were not written`)).finally(() => {
          state.rewinding = false
        })
      }
      return
    }
    // Fetched from a broker that has restarted empty since: its offsets mean nothing now.
    if (generation.restarts !== restarts) return
    await commit(consumer, topic, partition, piece, generation.name)
    opts.hooks?.afterCommit?.({ partition, seq: generation.seq })
    state.next = piece.last + 1n
    opts.onCommitted?.({ bytes })
    stats.batches++
    stats.events += result.events
    stats.meterRows += result.meterRows
    stats.duplicates += result.duplicates
    count(result)
    commitMetrics.committed(topic, partition, piece, result)
  }

  /** Re-read the partition from its last commit; the write stage makes the replay exact. */
  async function rewind(topic: string, partition: number, err: unknown) {
    if (stopping) return
    log(`batch on ${topic}[${partition}] failed; replaying from the last committed offset`, err)
    await new Promise((r) => setTimeout(r, 500))
    const next = partitions.get(partition)?.next
    if (next !== null && next !== undefined && !stopping) {
      try {
        consumer.seek({ topic, partition, offset: next.toString() })
      } catch (seekErr) {
        log(`seek on ${topic}[${partition}] failed`, seekErr)
      }
    }
  }

  let admin: Admin | undefined
  /**
   * Whether the group's committed offset of a partition was made on another generation of the
   * local broker (its metadata names the generation its piece was fetched in). A consumer that had
   * not yet noticed an empty restart commits the old broker's offsets under the old name; a
   * partition state made afresh at that position would then pass records nobody read. Returns a
   * description of the stale commit, or undefined when the position can be trusted.
   */
  async function staleCommit(topic: string, partition: number): Promise<string | undefined> {
    if (!broker.watch || stopping) return undefined
    const known = broker.watch.current
    const current = await broker.watch.read()
    if (current === null) return undefined
    if (current === undefined || current !== known) return 'the broker generation is unknown or just changed'
    if (stopping) return undefined
    admin ??= opts.kafka.admin({ retry: { retries: 2 } })
    await admin.connect()
    if (stopping) {
      await admin.disconnect().catch(() => undefined)
      return undefined
    }
    const [offsets] = await admin.fetchOffsets({ groupId: opts.groupId, topics: [topic] })
    const p = offsets?.partitions.find((x) => x.partition === partition)
    if (!p || Number(p.offset) < 0) return undefined
    return (p.metadata || null) === current ? undefined : `offset ${p.offset} named ${p.metadata || 'no generation'}`
  }

  /**
   * A partition this consumer has no state for, whose committed offset is stale: its state
   * starts at 0 and the consumer reads it again from there (the write stage makes that exact).
   * Runs at assignment (a stale position may lie past the new broker's end, where no batch comes)
   * and before the first batch.
   */
  async function adoptStale(topic: string, partition: number): Promise<boolean> {
    const stale = await staleCommit(topic, partition)
    if (!stale || partitions.has(partition) || !assignment.includes(partition)) return false
    partitions.set(partition, { chain: Promise.resolve(), next: 0n, inflight: [] })
    log(`the committed offset of ${topic}[${partition}] (${stale}) was not made on this broker generation; reading the partition again from 0`)
    consumer.seek({ topic, partition, offset: '0' })
    return true
  }

  // eslint-disable-next-line @typescript-eslint/unbound-method -- kafkajs hands these over as plain functions
  async function eachBatch({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> {
    if (batch.messages.length === 0) return
    const seq = ++batchSeq
    opts.hooks?.beforeBatch?.({ partition: batch.partition, fetchedOffset: String((batch as { fetchedOffset?: string }).fetchedOffset), seq })
    const { piece, bytes } = decode(opts.groupId, batch)
    const { first, last } = piece
    let state = partitions.get(batch.partition)
    if (!state) {
      if (await adoptStale(batch.topic, batch.partition)) return
      state = partitions.get(batch.partition) ?? { chain: Promise.resolve(), next: first, inflight: [] }
      partitions.set(batch.partition, state)
    }
    // Handed to the write stage at once, so pieces fetched while a write runs join the next one
    // (the local broker returns one producer batch per partition and fetch); offsets are
    // committed in order on the chain. A piece written after an earlier one failed is replayed
    // with it from the last commit, and its events are then duplicates.
    const fetched: Fetched = { restarts: fetchedUnder(), seq, name: broker.watch?.current ?? null }
    const written = piece.records.length === 0 ? undefined : write(stage, piece)
    written?.catch(() => undefined)
    const previous = state.chain
    state.chain = previous.then(() =>
      written === undefined
        ? undefined
        : persist(batch.topic, batch.partition, piece, bytes, written, fetched).catch((err) => rewind(batch.topic, batch.partition, err)),
    )
    state.inflight.push(state.chain)
    resolveOffset(batch.lastOffset())
    const recordsBehind = Number(BigInt(batch.highWatermark) - last - 1n)
    aggregatorConsumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, recordsBehind)
    commitMetrics.fetched(batch.topic, batch.partition, recordsBehind)
    await heartbeat()
    // Up to LOOKAHEAD fetched pieces per partition wait for their writes: bounded memory, and
    // fetching overlaps writing. A write may so outlive the assignment that fetched it; the
    // shard fence refuses it then (its epoch moved), and its offsets are never committed.
    while (state.inflight.length > LOOKAHEAD) await state.inflight.shift()
  }

  const ready = stage.tick()
  await ready
  async function run(): Promise<void> {
    // The broker's generation first: a consumer that reads before it knows one cannot tell an
    // empty restart later (its first answer would be the new generation, seen as no change).
    await broker.watch?.ready
    if (stopping) return
    await checkTopicPartitions(opts.kafka, opts.topic, opts.partitions)
    await checkGroupProtocol(opts.kafka, opts.groupId, ASSIGNER_NAME)
    await consumer.connect()
    await consumer.subscribe({ topic: opts.topic, fromBeginning: true })
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 16, eachBatch })
  }
  let running: Promise<void> = Promise.resolve()
  const start = () => {
    running = run().catch((err) => {
      if (stopping) return
      const refused = err instanceof WritePathVersionError || err instanceof TopicLayoutError
      log(refused ? `aggregator refused to start: ${(err as Error).message}; checking again in 5 s` : 'aggregator consumer failed to start; retrying in 1 s', refused ? undefined : err)
      return new Promise<void>((r) => setTimeout(r, refused ? 5000 : 1000)).then(() => (stopping ? undefined : restart()))
    })
  }
  const restart = async () => {
    await consumer.disconnect().catch(() => undefined)
    if (!stopping) start()
  }
  let markJoined!: () => void
  const joined = new Promise<void>((r) => (markJoined = r))
  consumer.on(consumer.events.GROUP_JOIN, () => markJoined())
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (stopping || payload.restart) return
    // A broker's protocol answer (a rebalance raced by a joining member) is recovered by the
    // restart below: an operator sees it, not as an error.
    const report = isBrokerAnswer(payload.error) ? (opts.warn ?? log) : log
    report('aggregator consumer crashed; restarting it', payload.error)
    setTimeout(() => void restart(), 1000)
  })
  const brokerRestarted = () => {
    restarts++
    for (const partition of assignment) {
      const state = partitions.get(partition)
      if (state) state.next = 0n
      try {
        consumer.seek({ topic: opts.topic, partition, offset: '0' })
      } catch (err) {
        log(`seek to 0 on ${opts.topic}[${partition}] after a broker restart failed`, err)
      }
    }
  }
  const watch = broker.watch = opts.watchBroker
    ? watchBrokerGeneration(opts.generationKafka ?? opts.kafka, (generation) => {
        log(`the broker restarted empty (${generation}); reading every assigned partition again from 0`)
        brokerRestarted()
      })
    : undefined
  start()
  const tick = () => {
    void stage.tick().catch((err) => log('meter refresh failed', err))
    void backfills.tick().catch((err) => log('backfill failed', err))
  }
  const timer = setInterval(tick, opts.meterRefreshMs ?? 500)
  timer.unref()
  const audit = new OnlineAudit(opts.ch, opts.pg, store, meters, log)
  let auditing: Promise<unknown> | undefined
  const auditTimer = opts.audit?.everyMs
    ? setInterval(() => {
        auditing ??= audit.run(opts.audit!.samples).catch((err) => log('usage audit failed', err)).finally(() => (auditing = undefined))
      }, opts.audit.everyMs)
    : undefined
  auditTimer?.unref()



  let stopped: Promise<void> | undefined
  return {
    name,
    stats,
    write: stage.stats,
    ready,
    joined,
    backfills,
    stage,
    get assignment() {
      return assignment
    },
    brokerRestarted,
    stop() {
      stopped ??= (async () => {
        clearInterval(timer)
        clearInterval(auditTimer)
        removeLagCollector()
        commitMetrics.retain(opts.topic, [])
        stopping = true
        await watch?.stop()
        await stage.stop()
        await Promise.all([...partitions.values()].map((p) => p.chain))
        await Promise.race([running, new Promise((r) => setTimeout(r, 2000))])
        await consumer.disconnect()
        await backfills.tick().catch(() => undefined)
        await producer?.disconnect().catch(() => undefined)
        await admin?.disconnect().catch(() => undefined)
      })()
      return stopped
    },
  }
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
