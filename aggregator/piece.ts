// What the consumer hands the write stage (a piece: a consumed Kafka batch's records) and what
// it gets back for it.
import type { IngestBatch } from '../schemas/events.js'

export interface PieceRecord {
  offset: bigint
  batch: IngestBatch
  /** when the record was produced to Kafka (its timestamp, ms) */
  producedMs?: number
}

export interface Piece {
  /** consumer group / topic / partition */
  stream: string
  partition?: number
  first: bigint
  last: bigint
  records: PieceRecord[]
  /** when the consumer fetched it (ms) */
  fetchedMs?: number
}

export interface PieceResult {
  events: number
  duplicates: number
  /** events older than the hot window checked in dedup_events (duplicates among them included) */
  cold?: number
  meterRows: number
  skipped: Record<string, number>
  /** events counted per meter, keyed `tenant_id \0 meter_id` (metrics) */
  perMeter: Map<string, number>
  /**
   * Events of shards another writer took from this one, in the partition that writer reads:
   * neither counted nor sent on here, so the piece's offsets must not be committed by this
   * writer (a zombie's commit would pass records only the new owner may vouch for).
   */
  takenOver?: number
  /** when the write that carried the piece started, and when its bucket block was in (the usage visible), ms */
  timing?: { startedMs: number; visibleMs: number }
}
