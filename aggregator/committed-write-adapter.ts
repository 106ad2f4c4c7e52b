// TEMPORARY (until the new write path publishes CommittedWrites itself): folds the bucket rows
// of one write-stage call into the CommittedWrite the live counters consume
// (schemas/committed-write.ts). One write per stage call, shard 0, epoch '0'; the seq starts at
// this process's start time in microseconds and increases by one per write, so it also grows
// across restarts of the aggregator.
import { Decimal } from 'decimal.js'
import type { CommittedBucket, CommittedWrite } from '../schemas/committed-write.js'

let nextSeq = BigInt(Date.now()) * 1000n

/** `rows`: meter_buckets rows as bucketRow() builds them (ledger rows are skipped). */
export function committedWriteOf(rows: unknown[][]): CommittedWrite {
  const folded = new Map<string, { b: CommittedBucket; sum: Decimal; max: Decimal }>()
  for (const r of rows) {
    const [tenant_id, environment_id, meter_id, external_customer_id, bucket_start, , , value] = r as [string, string, string, string, number, unknown, unknown, string]
    if (tenant_id === '') continue // the write ledger's rows
    const key = `${tenant_id}\0${environment_id}\0${meter_id}\0${external_customer_id}\0${bucket_start}`
    const f = folded.get(key)
    if (!f) {
      folded.set(key, { b: { tenant_id, environment_id, meter_id, external_customer_id, bucket_start, value_sum: '', event_count: 1, value_max: '' }, sum: new Decimal(value), max: new Decimal(value) })
    } else {
      f.b.event_count++
      f.sum = f.sum.plus(value)
      if (f.max.lt(value)) f.max = new Decimal(value)
    }
  }
  const buckets = [...folded.values()].map((f) => ({ ...f.b, value_sum: f.sum.toFixed(), value_max: f.max.toFixed() }))
  return { writes: [{ shard: 0, epoch: '0', seq: String(nextSeq++) }], buckets }
}
