// Named ingest steps: enrich (ids, tenancy, defaults) -> encode (Avro) -> produce (acks=all).
import type { Producer } from 'kafkajs'
import { ulid } from '../platform/ids.js'
import { kafkaProduceSeconds } from '../platform/metrics.js'
import { encodeBatch, type IngestBatch, type UsageEvent } from '../schemas/events.js'
import type { EventInput } from './event-schema.js'

/** Kafka's default max.message.bytes is 1 MB; stay below it per record. */
const MAX_RECORD_BYTES = 900 * 1024

export interface Tenancy {
  tenantId: string
  environmentId: string
}

export function enrich(inputs: EventInput[], tenancy: Tenancy, nowMs: number): IngestBatch {
  const events: UsageEvent[] = inputs.map((e) => ({
    event_id: e.event_id ?? `evt_${ulid(nowMs)}`,
    event_name: e.event_name.trim(),
    external_customer_id: e.external_customer_id,
    customer_id: e.customer_id ?? null,
    timestamp: e.timestamp ? Date.parse(e.timestamp) : nowMs,
    source: e.source ?? null,
    properties: JSON.stringify(e.properties ?? {}),
  }))
  return { batch_id: `batch_${ulid(nowMs)}`, tenant_id: tenancy.tenantId, environment_id: tenancy.environmentId, ingested_at: nowMs, events }
}

/** One Kafka record: its message key, the Avro value and how many events it holds. */
export interface EncodedRecord {
  key: string
  value: Buffer
  events: number
}

/** One record per request; a request too large for one record is split in halves. */
export function encode(batch: IngestBatch): EncodedRecord[] {
  const parts = split(batch)
  return parts.map((p, i) => ({ key: parts.length === 1 ? batch.batch_id : `${batch.batch_id}-${i}`, value: p.value, events: p.events }))
}

function split(batch: IngestBatch): { value: Buffer; events: number }[] {
  const value = encodeBatch(batch)
  if (value.length <= MAX_RECORD_BYTES || batch.events.length === 1) return [{ value, events: batch.events.length }]
  const mid = Math.ceil(batch.events.length / 2)
  return [
    ...split({ ...batch, batch_id: `${batch.batch_id}-a`, events: batch.events.slice(0, mid) }),
    ...split({ ...batch, batch_id: `${batch.batch_id}-b`, events: batch.events.slice(mid) }),
  ]
}

/**
 * Resolves only when Kafka acknowledged every record with acks=all. Records are keyed by
 * batch id, which spreads load evenly over partitions; order across records does not matter
 * because every aggregation is order-independent (LATEST uses the event timestamp).
 */
export async function produce(producer: Producer, topic: string, records: (EncodedRecord & { tenantId: string; environmentId: string })[]): Promise<void> {
  const end = kafkaProduceSeconds.startTimer()
  try {
    await producer.send({
      topic,
      acks: -1,
      messages: records.map((r) => ({ key: r.key, value: r.value, headers: { tenant_id: r.tenantId, environment_id: r.environmentId } })),
    })
  } finally {
    end()
  }
}
