// Kafka consumer that materialises meter buckets in ClickHouse: runs the steps of
// pipeline.ts (decode -> write -> commit -> count) per batch, in order per partition, and
// replays a partition from its last commit after a failure.
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs'
import type { ClickHouse } from '../clickhouse/client.js'
import type { CommittedWriteListener } from '../schemas/committed-write.js'
import type { MeterSource } from '../schemas/meters.js'
import { createConsumer } from '../platform/kafka.js'
import { aggregatorConsumerLag } from '../platform/metrics.js'
import { ActiveMeters } from './active-meters.js'
import { CommitMetrics } from './commit-metrics.js'
import { addLagCollector } from '../platform/business-metrics.js'
import { MeterCache } from './meter-cache.js'
import { commit, count, decode, write } from './pipeline.js'
import { WriteStage, type Piece, type WriteStageHooks } from './write-stage.js'

export interface AggregatorHooks extends WriteStageHooks {
  /** Called after the ClickHouse writes and before the offset commit (fault-injection point for tests). */
  afterInsert?: (info: { partition: number; lastOffset: string; events: number }) => Promise<void> | void
  /** Called after each page a meter backfill writes (fault-injection point for tests). */
  afterBackfillPage?: (meterId: string) => Promise<void> | void
}

export interface AggregatorOptions {
  kafka: Kafka
  ch: ClickHouse
  meters: MeterSource
  topic: string
  groupId: string
  meterRefreshMs?: number
  hooks?: AggregatorHooks
  /** told the record bytes and message keys each commit covers (all-in-one: pacing and the ingest spool) */
  onCommitted?: (committed: { bytes: number; keys: string[] }) => void
  /** called after each committed write (its buckets and dedup keys durable): the live counters */
  onCommittedWrite?: CommittedWriteListener
  log?: (msg: string, err?: unknown) => void
}

export interface Aggregator {
  stop(): Promise<void>
  stats: { batches: number; events: number; meterRows: number; duplicates: number }
  /** Resolves once the meter cache has loaded (and backfilled) at least once. */
  ready: Promise<void>
  /**
   * The in-memory broker restarted empty: its offsets start again at 0, so the positions and
   * commits this consumer holds would skip records. Every partition is read again from 0.
   */
  brokerRestarted(): void
}

export async function startAggregator(opts: AggregatorOptions): Promise<Aggregator> {
  const log = opts.log ?? ((msg: string, err?: unknown) => console.error(`[aggregator] ${msg}`, err ?? ''))
  const meters = new ActiveMeters(opts.ch, new MeterCache(opts.meters, opts.meterRefreshMs ?? 500), log, opts.hooks?.afterBackfillPage)
  const stage = new WriteStage(opts.ch, meters, { hooks: opts.hooks, onCommittedWrite: opts.onCommittedWrite })
  const stats = { batches: 0, events: 0, meterRows: 0, duplicates: 0 }
  const commitMetrics = new CommitMetrics()
  const removeLagCollector = addLagCollector(() => commitMetrics.collect())
  const consumer: Consumer = createConsumer(opts.kafka, opts.groupId, () => !stopping)

  /**
   * Per partition, batches are written and committed strictly in order on a promise chain,
   * while kafkajs already fetches and decodes the next batch (one batch of look-ahead).
   * `next` is the offset up to which everything is in ClickHouse and committed; a batch that
   * does not continue it is never committed, so a failure can never leave a gap.
   */
  interface PartitionState {
    chain: Promise<void>
    next: bigint | null
  }
  const partitions = new Map<number, PartitionState>()
  let stopping = false

  async function persist(topic: string, partition: number, piece: Piece, bytes: number, keys: string[]) {
    const state = partitions.get(partition)!
    const result = await write(stage, piece)
    await opts.hooks?.afterInsert?.({ partition, lastOffset: piece.last.toString(), events: result.events })
    if (state.next !== null && piece.first > state.next) return // after a failure: wait for the replay
    await commit(consumer, topic, partition, piece)
    state.next = piece.last + 1n
    opts.onCommitted?.({ bytes, keys })
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

  // eslint-disable-next-line @typescript-eslint/unbound-method -- kafkajs hands these over as plain functions
  async function eachBatch({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> {
    if (batch.messages.length === 0) return
    const { piece, bytes, keys } = decode(opts.groupId, batch)
    const { first, last } = piece
    let state = partitions.get(batch.partition)
    if (!state) {
      state = { chain: Promise.resolve(), next: first }
      partitions.set(batch.partition, state)
    }
    const previous = state.chain
    state.chain = previous.then(() =>
      piece.records.length === 0
        ? undefined
        : persist(batch.topic, batch.partition, piece, bytes, keys).catch((err) => rewind(batch.topic, batch.partition, err)),
    )
    resolveOffset(batch.lastOffset())
    const recordsBehind = Number(BigInt(batch.highWatermark) - last - 1n)
    aggregatorConsumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, recordsBehind)
    commitMetrics.fetched(batch.topic, batch.partition, recordsBehind)
    await heartbeat()
    // One batch of look-ahead per partition: bounded memory, and fetch overlaps the insert.
    await previous
  }

  const ready = stage.tick()
  await ready
  // Joining the group is not awaited: after a crash the broker may hold the dead member until
  // its session times out, and the process must serve meanwhile (the spool accepts events).
  async function run(): Promise<void> {
    await consumer.connect()
    await consumer.subscribe({ topic: opts.topic, fromBeginning: true })
    await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 16, eachBatch })
  }
  let running: Promise<void> = Promise.resolve()
  const start = () => {
    running = run().catch((err) => {
      if (stopping) return
      log('aggregator consumer failed to start; retrying in 1 s', err)
      return new Promise<void>((r) => setTimeout(r, 1000)).then(() => (stopping ? undefined : restart()))
    })
  }
  const restart = async () => {
    await consumer.disconnect().catch(() => undefined)
    if (!stopping) start()
  }
  // kafkajs restarts itself after retriable errors; anything else (e.g. a broker that came back
  // empty) would leave the aggregator stopped, so it starts over from the committed offsets.
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (stopping || payload.restart) return
    log('aggregator consumer crashed; restarting it', payload.error)
    setTimeout(() => void restart(), 1000)
  })
  start()
  // New meters are activated (backfilled) between writes, also when no events arrive.
  const timer = setInterval(() => void stage.tick().catch((err) => log('meter refresh failed', err)), opts.meterRefreshMs ?? 500)
  timer.unref()

  let stopped: Promise<void> | undefined
  return {
    stats,
    ready,
    brokerRestarted() {
      for (const [partition, state] of partitions) {
        state.next = 0n
        try {
          consumer.seek({ topic: opts.topic, partition, offset: '0' })
        } catch (err) {
          log(`seek to 0 on ${opts.topic}[${partition}] after a broker restart failed`, err)
        }
      }
    },
    stop() {
      stopped ??= (async () => {
        clearInterval(timer)
        removeLagCollector()
        stopping = true
        // What is not written yet stays uncommitted: Kafka or the ingest spool still has it.
        await stage.stop()
        await Promise.all([...partitions.values()].map((p) => p.chain))
        await Promise.race([running, new Promise((r) => setTimeout(r, 2000))])
        await consumer.disconnect()
      })()
      return stopped
    },
  }
}
