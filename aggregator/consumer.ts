// Kafka consumer that materialises meter rows in ClickHouse.
// Steps per batch: decode -> match meters -> build rows -> insert (buffered) -> commit offsets.
// Offsets are committed only after ClickHouse accepted the rows; a crash in between
// replays the batch, and the ReplacingMergeTree key (…, event_id) makes the replay a no-op
// for every meter total. That is the exactly-once guarantee for results.
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs'
import type { ClickHouse } from '../clickhouse/client.js'
import type { MeterSource } from '../billing-api/meters/meter-definitions.js'
import { createConsumer } from '../platform/kafka.js'
import { aggregatorConsumerLag, aggregatorEventsConsumed, aggregatorEventsSkipped, aggregatorMeterRowsWritten } from '../platform/metrics.js'
import { decodeBatch, type IngestBatch } from '../schemas/events.js'
import { backfillMeter } from './backfill.js'
import { InsertBuffer } from './insert-buffer.js'
import { MeterCache, type MeterSnapshot } from './meter-cache.js'
import { buildRows, indexMeters, type BuiltRows } from './meter-rows.js'

export interface AggregatorHooks {
  /** Called after the ClickHouse insert and before the offset commit (fault-injection point for tests). */
  afterInsert?: (info: { partition: number; lastOffset: string; events: number }) => Promise<void> | void
}

export interface AggregatorOptions {
  kafka: Kafka
  ch: ClickHouse
  meters: MeterSource
  topic: string
  groupId: string
  meterRefreshMs?: number
  hooks?: AggregatorHooks
  /** told how many record bytes each commit covers (all-in-one ingest backpressure) */
  onCommitted?: (bytes: number) => void
  log?: (msg: string, err?: unknown) => void
}

export interface Aggregator {
  stop(): Promise<void>
  stats: { batches: number; events: number; meterRows: number }
  /** Resolves once the meter cache has loaded (and backfilled) at least once. */
  ready: Promise<void>
}

export async function startAggregator(opts: AggregatorOptions): Promise<Aggregator> {
  const log = opts.log ?? ((msg: string, err?: unknown) => console.error(`[aggregator] ${msg}`, err ?? ''))
  const cache = new MeterCache(opts.meters, opts.meterRefreshMs ?? 500)
  const stats = { batches: 0, events: 0, meterRows: 0 }
  const consumer: Consumer = createConsumer(opts.kafka, opts.groupId)
  let backfills = Promise.resolve()
  const buffer = new InsertBuffer(opts.ch)

  async function refreshMeters(force = false): Promise<void> {
    const fresh = await cache.refresh(force)
    // New meters are backfilled after the index already includes them, so every event is
    // covered by either the live path or the backfill (both, harmlessly, at the edge).
    for (const meter of fresh) {
      backfills = backfills
        .then(() => backfillMeter(opts.ch, meter).then(() => undefined))
        .catch((err) => log(`backfill of meter ${meter.id} failed`, err))
    }
  }

  /**
   * Per partition, batches are inserted and committed strictly in order on a promise chain,
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

  async function persist(topic: string, partition: number, first: bigint, last: bigint, decoded: IngestBatch[], out: BuiltRows, snapshot: MeterSnapshot, bytes: number) {
    const state = partitions.get(partition)!
    await buffer.add(out)
    // A meter that appeared while this batch was in flight may have been backfilled before
    // these raw events were inserted: give it this batch's rows too (duplicates merge away).
    const added = cache.addedSince(snapshot)
    if (added.length) {
      const late: BuiltRows = { raw: [], meter: [], skipped: {} }
      const index = indexMeters(added)
      for (const d of decoded) buildRows(d, index, late, false)
      await opts.ch.insertCompact('meter_usage', late.meter)
      out.meter.push(...late.meter)
    }
    const events = decoded.reduce((n, d) => n + d.events.length, 0)
    await opts.hooks?.afterInsert?.({ partition, lastOffset: last.toString(), events })
    if (state.next !== null && first > state.next) return // after a failure: wait for the replay
    await consumer.commitOffsets([{ topic, partition, offset: (last + 1n).toString() }])
    state.next = last + 1n
    opts.onCommitted?.(bytes)
    stats.batches++
    stats.events += events
    stats.meterRows += out.meter.length
    aggregatorEventsConsumed.inc(events)
    aggregatorMeterRowsWritten.inc(out.meter.length)
    for (const [reason, n] of Object.entries(out.skipped)) aggregatorEventsSkipped.inc({ reason }, n)
  }

  /** Re-read the partition from its last commit; what was inserted meanwhile merges away. */
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

  async function eachBatch({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> {
    if (batch.messages.length === 0) return
    await refreshMeters()
    const snapshot = cache.current
    const out: BuiltRows = { raw: [], meter: [], skipped: {} }
    const values = batch.messages.flatMap((m) => (m.value ? [m.value] : []))
    const decoded = values.map(decodeBatch)
    const bytes = values.reduce((n, v) => n + v.length, 0)
    for (const d of decoded) buildRows(d, snapshot.index, out)
    const first = BigInt(batch.firstOffset() ?? batch.messages[0].offset)
    const last = BigInt(batch.lastOffset())
    let state = partitions.get(batch.partition)
    if (!state) {
      state = { chain: Promise.resolve(), next: first }
      partitions.set(batch.partition, state)
    }
    const previous = state.chain
    state.chain = previous.then(() =>
      persist(batch.topic, batch.partition, first, last, decoded, out, snapshot, bytes).catch((err) => rewind(batch.topic, batch.partition, err)),
    )
    resolveOffset(batch.lastOffset())
    aggregatorConsumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Number(BigInt(batch.highWatermark) - last - 1n))
    await heartbeat()
    // One batch of look-ahead per partition: bounded memory, and fetch overlaps the insert.
    await previous
  }

  await refreshMeters(true)
  await consumer.connect()
  await consumer.subscribe({ topic: opts.topic, fromBeginning: true })
  await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 16, eachBatch })
  const timer = setInterval(() => void refreshMeters().catch((err) => log('meter refresh failed', err)), opts.meterRefreshMs ?? 500)
  timer.unref()

  return {
    stats,
    ready: backfills,
    async stop() {
      clearInterval(timer)
      stopping = true
      await Promise.all([...partitions.values()].map((p) => p.chain))
      await consumer.disconnect()
      await backfills
    },
  }
}
