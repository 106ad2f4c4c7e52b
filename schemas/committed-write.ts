/** One committed aggregator write, published after its buckets and dedup keys are durable. */
export interface CommittedWrite {
  /** the write's identity: increments are applied once per (shard, epoch, seq) */
  writes: { shard: number; epoch: string; seq: string }[]
  /** the write's folded minute buckets (only newly counted events; duplicates excluded) */
  buckets: CommittedBucket[]
  /**
   * Wall-clock ms at which the insert of these buckets began. The write is published only after
   * its dedup keys and Postgres record follow the insert, so a bucket read may hold it and end
   * before its message arrives; a read that ended before this instant does not hold it.
   * Absent: unknown (a counter then takes a write received after its read as not in it).
   */
  visible_from?: number
}
export interface CommittedBucket {
  tenant_id: string
  environment_id: string
  meter_id: string
  external_customer_id: string
  /** epoch seconds of the minute */
  bucket_start: number
  /** decimal strings (Decimal(38,12) values) */
  value_sum: string
  event_count: number
  value_max: string
}
export type CommittedWriteListener = (w: CommittedWrite) => void
