// Kafka consumer that materialises meter rows in ClickHouse.
// Steps per batch: decode -> match meters -> build rows -> insert -> commit offsets.
// Offsets are committed only after ClickHouse accepted the rows; a crash in between
// replays the batch, and the ReplacingMergeTree key (…, event_id) makes the replay a no-op
// for every meter total. That is the exactly-once guarantee for results.
import type { Consumer, EachBatchPayload, Kafka } from 'kafkajs'
import type { ClickHouse } from '../clickhouse/client.js'
import type { MeterSource } from '../billing-api/meters/meter-definitions.js'
import { createConsumer } from '../platform/kafka.js'
import { aggregatorConsumerLag, aggregatorEventsConsumed, aggregatorEventsSkipped, aggregatorMeterRowsWritten } from '../platform/metrics.js'
import { decodeBatch } from '../schemas/events.js'
import { backfillMeter } from './backfill.js'
import { MeterCache } from './meter-cache.js'
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

  async function eachBatch({ batch, resolveOffset, heartbeat }: EachBatchPayload): Promise<void> {
    if (batch.messages.length === 0) return
    await refreshMeters()
    const snapshot = cache.current
    const out: BuiltRows = { raw: [], meter: [], skipped: {} }
    const decoded = batch.messages.filter((m) => m.value).map((m) => decodeBatch(m.value!))
    let events = 0
    for (const d of decoded) {
      events += d.events.length
      buildRows(d, snapshot.index, out)
    }
    await Promise.all([opts.ch.insertCompact('events_raw', out.raw), opts.ch.insertCompact('meter_usage', out.meter)])
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
    const lastOffset = batch.lastOffset()
    await opts.hooks?.afterInsert?.({ partition: batch.partition, lastOffset, events })
    const next = (BigInt(lastOffset) + 1n).toString()
    await consumer.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: next }])
    resolveOffset(lastOffset)
    stats.batches++
    stats.events += events
    stats.meterRows += out.meter.length
    aggregatorEventsConsumed.inc(events)
    aggregatorMeterRowsWritten.inc(out.meter.length)
    for (const [reason, n] of Object.entries(out.skipped)) aggregatorEventsSkipped.inc({ reason }, n)
    aggregatorConsumerLag.set({ topic: batch.topic, partition: String(batch.partition) }, Number(BigInt(batch.highWatermark) - BigInt(next)))
    await heartbeat()
  }

  await refreshMeters(true)
  await consumer.connect()
  await consumer.subscribe({ topic: opts.topic, fromBeginning: true })
  await consumer.run({ autoCommit: false, eachBatchAutoResolve: false, partitionsConsumedConcurrently: 4, eachBatch })
  const timer = setInterval(() => void refreshMeters().catch((err) => log('meter refresh failed', err)), opts.meterRefreshMs ?? 500)
  timer.unref()

  return {
    stats,
    ready: backfills,
    async stop() {
      clearInterval(timer)
      await consumer.disconnect()
      await backfills
    },
  }
}
