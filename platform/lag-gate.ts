// Backpressure for the all-in-one local platform. The local Kafka-protocol broker (librdkafka's
// mock cluster) keeps at most 5 MB per partition in memory and silently drops older records:
// if the aggregator fell further behind than that, events would be lost. With the spool off
// (SPOOL_ENABLED=false), ingest therefore refuses new batches (429, retry) while more than
// `maxPendingBytes` of produced records are not yet committed by the aggregator in this
// process. With the spool, its forwarder holds back instead (ingest/spool/spool.ts, canSend)
// and ingest keeps accepting. Real Kafka retains by time; the split services use neither.
import { DomainError } from './errors.js'

export class LagGate {
  private pending = 0

  constructor(readonly maxPendingBytes: number) {}

  /** Throws too_many_requests while the aggregator is too far behind. */
  admit(): void {
    if (this.pending > this.maxPendingBytes) {
      throw new DomainError('too_many_requests', 429, 'ingest is ahead of aggregation; retry this batch shortly (same event_ids)')
    }
  }

  produced(bytes: number): void {
    this.pending += bytes
  }

  consumed(bytes: number): void {
    this.pending = Math.max(0, this.pending - bytes)
  }

  get pendingBytes(): number {
    return this.pending
  }
}
