// The write stage's rows, built before anything is written: the events of a write's pieces, each
// with its shard, and from the new ones the rows of events_raw and meter_events, the folded
// buckets with an in-doubt marker per shard and month, and the dedup keys (write-stage.ts).
import type { DedupKeyRow } from '../clickhouse/queries/dedup-keys.js'
import { markerRow, type MarkedKey } from '../clickhouse/queries/write-markers.js'
import type { IngestBatch, UsageEvent } from '../schemas/events.js'
import type { CommittedBucket } from '../schemas/committed-write.js'
import type { MeterDefinition } from '../schemas/meters.js'
import { checkText, eventDigest, keyText, shardOf, type EventDigest } from '../schemas/shards.js'
import type { DedupItem } from './dedup-step.js'
import { BucketFolder } from './fold.js'
import { bucketRow, meterEventRow, meterHits, monthOf, rawRow } from './meter-rows.js'
import type { Piece, PieceResult } from './piece.js'
import type { WriteId } from './shard-fence.js'

export interface EventRef {
  batch: IngestBatch
  e: UsageEvent
  /** the digest of the event's id: its shard */
  d: EventDigest
  shard: number
  result: PieceResult
  /** the partition the event was read from */
  partition?: number
}

/** An event of a shard this writer holds, with its dedup key. */
export interface KeyedEvent extends DedupItem {
  ref: EventRef
  result: PieceResult
  /** the minute the key is kept in memory by (ShardTable.keepMinute) */
  keepMinute: number
}

/** Every event of the pieces with its shard, a result per piece, and the shards touched. */
export function eventRefs(pieces: Piece[]): { results: PieceResult[]; refs: EventRef[]; touched: Set<number> } {
  const results: PieceResult[] = pieces.map(() => ({ events: 0, duplicates: 0, meterRows: 0, skipped: {}, perMeter: new Map() }))
  const refs: EventRef[] = []
  const touched = new Set<number>()
  pieces.forEach((p, pi) => {
    for (const { batch } of p.records) {
      for (const e of batch.events) {
        const d = eventDigest(batch.tenant_id, batch.environment_id, e.event_id)
        refs.push({ batch, e, d, shard: shardOf(d), result: results[pi], partition: p.partition })
        touched.add(shardOf(d))
      }
    }
  })
  return { results, refs, touched }
}

export interface WriteRows {
  raw: unknown[][]
  meterEvents: unknown[][]
  folder: BucketFolder
  /** the folded buckets, then the markers */
  buckets: unknown[][]
  /** the folded buckets as published to the live counters (only with a listener) */
  committedBuckets: CommittedBucket[]
  keyRows: DedupKeyRow[]
}

/** The rows of a write's new events (`fresh`), counted in their pieces' results. */
export function writeRows(fresh: KeyedEvent[], index: Map<string, MeterDefinition[]>, writeIds: Map<number, WriteId>, published: boolean): WriteRows {
  const raw: unknown[][] = []
  const meterEvents: unknown[][] = []
  const folder = new BucketFolder()
  /** shard -> month -> keys of the events whose buckets this write holds */
  const marked = new Map<number, Map<number, MarkedKey[]>>()
  for (const { ref, result, state, key } of fresh) {
    const { batch, e } = ref
    raw.push(rawRow(batch, e))
    const matched = meterHits(index, batch.tenant_id, batch.environment_id, e, result.skipped)
    if (!matched) continue
    let any = false
    for (const hit of matched.hits) {
      if (!state.cuts.has(hit.meter.id)) continue
      any = true
      meterEvents.push(meterEventRow(batch, e, hit, matched.props))
      folder.add(bucketRow(batch, e, hit, matched.props))
      result.meterRows++
      const meterKey = `${batch.tenant_id}\u0000${hit.meter.id}`
      result.perMeter.set(meterKey, (result.perMeter.get(meterKey) ?? 0) + 1)
    }
    if (!any) continue
    mark(marked, state.shard, monthOf(e.timestamp), { d: key, ms: e.timestamp })
  }
  const buckets = folder.rows()
  const committedBuckets = published ? buckets.map(toCommitted) : []
  for (const [shard, months] of marked) {
    const w = writeIds.get(shard)!
    for (const [month, digests] of months) buckets.push(markerRow(shard, w.epoch, w.seq, month, digests))
  }
  const keyRows: DedupKeyRow[] = fresh.map(({ state, key, ms }) => {
    const w = writeIds.get(state.shard)!
    return [state.shard, ms, keyText(key), checkText(key), w.epoch.toString(), w.seq.toString()]
  })
  return { raw, meterEvents, folder, buckets, committedBuckets, keyRows }
}

function mark(marked: Map<number, Map<number, MarkedKey[]>>, shard: number, month: number, k: MarkedKey): void {
  let months = marked.get(shard)
  if (!months) marked.set(shard, (months = new Map<number, MarkedKey[]>()))
  const list = months.get(month)
  if (list) list.push(k)
  else months.set(month, [k])
}

function toCommitted(row: unknown[]): CommittedBucket {
  return {
    tenant_id: row[0] as string, environment_id: row[1] as string, meter_id: row[2] as string, external_customer_id: row[3] as string,
    bucket_start: row[4] as number, value_sum: row[7] as string, event_count: row[8] as number, value_max: row[9] as string,
  }
}
