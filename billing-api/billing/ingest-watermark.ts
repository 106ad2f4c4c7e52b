// The ingestion watermark: an instant W such that every event acknowledged (202) before W is
// counted in ClickHouse. A period is billed only once W has passed its end (bill-due.ts), so a
// draft never misses usage that was accepted in time but not yet aggregated.
//
// How it is computed today (one aggregator consumer group over the `events` topic):
// - each call samples the billing clock (t), then every partition's end offset (high), then the
//   group's committed offsets; a record acknowledged by Kafka before t has an offset below that
//   sample's high, and the aggregator commits an offset only after the record's events are in
//   ClickHouse with their keys. So t is passed once every partition's commit reaches the high
//   it had at t. Samples are kept (a few minutes' worth) and W is the latest sample passed,
//   which works under steady load, where the lag is never zero;
// - an event is acknowledged by the ingest spool before Kafka has it: with the spool in the same
//   process (or its ingest thread), W is also kept before the oldest spooled record Kafka has not acknowledged
//   (`unforwardedSinceMs`). Split services (ingest elsewhere, SPOOL_RETAIN_UNTIL=acked) see only
//   Kafka; the spool forwards within milliseconds unless Kafka is down, when W stops anyway
//   only if nothing reaches Kafka. BILLING_WATERMARK_GRACE_MS covers that gap when needed.
// The new write path can replace this with its per-shard progress: W = min over shards of the
// time up to which the shard has written everything it acknowledged.
import type { Admin } from 'kafkajs'
import type { Clock } from '../../platform/clock.js'
import { readConsumerProgress } from '../../platform/kafka.js'

import type { IngestWatermark } from '../context.js'
export type { IngestWatermark }

/** No gate: billing trusts that usage is complete at the period end (BILLING_WAIT_FOR_INGESTION=false). */
export const noWatermark = (clock: Clock): IngestWatermark => ({ watermarkMs: () => Promise.resolve(clock.now().getTime()) })

export interface KafkaWatermark extends IngestWatermark {
  close(): Promise<void>
}

export interface KafkaWatermarkOptions {
  admin: Admin
  topic: string
  groupId: string
  clock: Clock
  /** wall-clock age of the oldest record the in-process spool has not handed to Kafka (0: none) */
  unforwardedAgeMs?: () => number | Promise<number>
  /** subtracted from W: covers acknowledgements this process cannot see */
  graceMs?: number
  /** how long samples are kept */
  keepMs?: number
}

interface Sample {
  at: number
  highs: Map<number, bigint>
}

export function kafkaIngestWatermark(opts: KafkaWatermarkOptions): KafkaWatermark {
  const samples: Sample[] = []
  const keepMs = opts.keepMs ?? 15 * 60_000
  let connected: Promise<void> | undefined
  return {
    async watermarkMs() {
      // connected on first use (a scheduler starts while Kafka is down); a failed connect is retried next time
      connected ??= opts.admin.connect().catch((err: unknown) => {
        connected = undefined
        throw err
      })
      await connected
      const at = opts.clock.now().getTime()
      const age = (await opts.unforwardedAgeMs?.()) ?? 0
      const progress = await readConsumerProgress(opts.admin, opts.topic, opts.groupId)
      samples.push({ at, highs: new Map(progress.map((p) => [p.partition, p.high])) })
      while (samples.length > 1 && samples[0].at < at - keepMs) samples.shift()
      const committed = new Map(progress.map((p) => [p.partition, p.committed < p.low ? p.low : p.committed]))
      // the latest sample whose every partition's high the group has committed
      let passed = -Infinity
      for (const s of samples) {
        if ([...s.highs].every(([partition, high]) => (committed.get(partition) ?? -1n) >= high)) passed = Math.max(passed, s.at)
      }
      return Math.min(passed, age > 0 ? at - age : Infinity) - (opts.graceMs ?? 0)
    },
    async close() {
      if (connected) await opts.admin.disconnect()
    },
  }
}
