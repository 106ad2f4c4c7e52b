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

/** One record per request; a request too large for one record is split in halves. */
export function encode(batch: IngestBatch): Buffer[] {
  const buf = encodeBatch(batch)
  if (buf.length <= MAX_RECORD_BYTES || batch.events.length === 1) return [buf]
  const mid = Math.ceil(batch.events.length / 2)
  return [
    ...encode({ ...batch, batch_id: `${batch.batch_id}-a`, events: batch.events.slice(0, mid) }),
    ...encode({ ...batch, batch_id: `${batch.batch_id}-b`, events: batch.events.slice(mid) }),
  ]
}

/**
 * Resolves only when Kafka acknowledged every record with acks=all. Records are keyed by
 * batch id, which spreads load evenly over partitions; order across records does not matter
 * because every aggregation is order-independent (LATEST uses the event timestamp).
 */
export async function produce(producer: Producer, topic: string, batch: IngestBatch, records: Buffer[]): Promise<void> {
  const end = kafkaProduceSeconds.startTimer()
  try {
    await producer.send({
      topic,
      acks: -1,
      messages: records.map((value, i) => ({
        key: records.length === 1 ? batch.batch_id : `${batch.batch_id}-${i}`,
        value,
        headers: { tenant_id: batch.tenant_id, environment_id: batch.environment_id },
      })),
    })
  } finally {
    end()
  }
}
