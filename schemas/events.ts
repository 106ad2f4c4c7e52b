// Shared event types and the Avro codec of the ingest -> aggregator topic.
import avro from 'avsc'
import { readFileSync } from 'node:fs'

export interface UsageEvent {
  event_id: string
  event_name: string
  external_customer_id: string
  customer_id: string | null
  /** epoch milliseconds */
  timestamp: number
  source: string | null
  /** JSON text of the event's properties object */
  properties: string
}

export interface IngestBatch {
  batch_id: string
  tenant_id: string
  environment_id: string
  /** epoch milliseconds */
  ingested_at: number
  events: UsageEvent[]
}

const schema = JSON.parse(readFileSync(new URL('./ingest-batch.avsc', import.meta.url), 'utf8')) as avro.Schema
// Timestamps travel as plain longs (epoch ms); no logical-type objects on the hot path.
const batchType = avro.Type.forSchema(schema)

/**
 * The event was sent without a timestamp: ingest stamped it with its arrival, the batch's
 * `ingested_at`, and never lets a timestamp sent with the batch equal that instant (enrich).
 */
export function stampedOnArrival(batch: IngestBatch, e: UsageEvent): boolean {
  return isArrivalStamp(e.timestamp, batch.ingested_at)
}

/** The same rule on stored rows: an event's timestamp and its batch's `ingested_at` (epoch ms). */
export function isArrivalStamp(timestampMs: number, ingestedAtMs: number): boolean {
  return timestampMs === ingestedAtMs
}

export function encodeBatch(batch: IngestBatch): Buffer {
  return batchType.toBuffer(batch)
}

export function decodeBatch(buf: Buffer): IngestBatch {
  return batchType.fromBuffer(buf) as IngestBatch
}
