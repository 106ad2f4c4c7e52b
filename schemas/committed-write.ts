/** One committed aggregator write, published after its buckets and dedup keys are durable. */
export interface CommittedWrite {
  /** the write's identity: increments are applied once per (shard, epoch, seq) */
  writes: { shard: number; epoch: string; seq: string }[]
  /** the write's folded minute buckets (only newly counted events; duplicates excluded) */
  buckets: CommittedBucket[]
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
