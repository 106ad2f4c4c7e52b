// Named ingest steps: enrich (ids, tenancy, defaults) -> encode (Avro) -> produce (acks=all).
import type { Producer } from 'kafkajs'
import { ulid } from '../platform/ids.js'
import { kafkaProduceSeconds } from '../platform/metrics.js'
import { encodeBatch, type IngestBatch, type UsageEvent } from '../schemas/events.js'
import { eventShard, partitionOfShard } from '../schemas/shards.js'
import type { EventInput } from './event-schema.js'

/** Kafka's default max.message.bytes is 1 MB; stay below it per record. */
const MAX_RECORD_BYTES = 900 * 1024

export interface Tenancy {
  tenantId: string
  environmentId: string
}

export function enrich(inputs: EventInput[], tenancy: Tenancy, receivedMs: number): IngestBatch {
  // The arrival instant stamps the events sent without a timestamp, and only them: no timestamp
  // sent in the batch may equal it (schemas/events.ts stampedOnArrival), so it moves on a
  // millisecond past any that does.
  const sent = new Set(inputs.flatMap((e) => (e.timestamp ? [Date.parse(e.timestamp)] : [])))
  let nowMs = receivedMs
  while (sent.has(nowMs)) nowMs++
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

/** One Kafka record: its message key, partition, the Avro value and how many events it holds. */
export interface EncodedRecord {
  key: string
  /** the partition of its events' shards (schemas/shards.ts); unset: a record of an earlier version */
  partition?: number
  value: Buffer
  events: number
}

/** `<batch id>@<partition>[-<part>]`: the partition travels in the key (and so in the spool's frames). */
export function recordKey(batchId: string, partition: number, part?: number): string {
  return `${batchId}@${partition}${part === undefined ? '' : `-${part}`}`
}

/** The partition named by a record key; undefined for keys of the earlier format (batch id only). */
export function partitionOfKey(key: string): number | undefined {
  const m = /@(\d+)(?:-\d+)?$/.exec(key)
  return m ? Number(m[1]) : undefined
}

/**
 * One record per partition the request's events belong to (an event's partition is its shard's,
 * so every copy of an event, in any request, travels in the same partition and reaches the one
 * writer of its shard); a part too large for one record is split in halves.
 */
export function encode(batch: IngestBatch, partitions: number): EncodedRecord[] {
  const byPartition = new Map<number, UsageEvent[]>()
  for (const e of batch.events) {
    const p = partitionOfShard(eventShard(batch.tenant_id, batch.environment_id, e.event_id), partitions)
    const list = byPartition.get(p)
    if (list) list.push(e)
    else byPartition.set(p, [e])
  }
  const out: EncodedRecord[] = []
  for (const [partition, events] of byPartition) {
    const parts = split({ ...batch, events })
    parts.forEach((p, i) => out.push({ key: recordKey(batch.batch_id, partition, parts.length === 1 ? undefined : i), partition, value: p.value, events: p.events }))
  }
  return out
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

/** Where Kafka put one produced record. */
export interface Placed {
  partition: number
  offset: bigint
}

/**
 * Resolves only when Kafka acknowledged every record with acks=all, with each record's
 * partition and offset (in the order given). Order across records does not matter because every
 * aggregation is order-independent (LATEST uses the event timestamp).
 */
export async function produce(producer: Producer, topic: string, records: (EncodedRecord & { tenantId: string; environmentId: string })[]): Promise<Placed[] | undefined> {
  const end = kafkaProduceSeconds.startTimer()
  try {
    const acks = await producer.send({
      topic,
      acks: -1,
      messages: records.map((r) => ({ key: r.key, partition: r.partition, value: r.value, headers: { tenant_id: r.tenantId, environment_id: r.environmentId } })),
    })
    // kafkajs sends a partition's messages in the order given: the n-th of partition p is at base + n.
    if (records.some((r) => r.partition === undefined)) return undefined
    const base = new Map(acks.map((a) => [a.partition, BigInt(a.baseOffset ?? '-1')]))
    const seen = new Map<number, bigint>()
    return records.map((r) => {
      const n = seen.get(r.partition!) ?? 0n
      seen.set(r.partition!, n + 1n)
      return { partition: r.partition!, offset: (base.get(r.partition!) ?? -1n) + n }
    })
  } finally {
    end()
  }
}
