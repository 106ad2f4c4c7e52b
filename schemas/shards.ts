// Event identity and ownership, shared by ingest (which routes) and the aggregator (which
// writes). An event sent with a timestamp is its (tenant, environment, event_id, timestamp): its
// dedup key is md5(tenant \0 environment \0 event_id \0 timestamp in ms), so every copy of it
// carries the time that places it in or out of the writers' hot window. An event sent without
// one (stamped on arrival) is its (tenant, environment, event_id): its key is the id's digest,
// so a resend stamped anew is the same event (docs/architecture.md, "Dedup keys in memory and
// on disk"). Every event id has one owning shard for life: the low bits of
// md5(tenant \0 environment \0 event_id). A shard's events always travel in the same Kafka
// partition (shard mod partitions), and one writer at a time holds a shard (aggregator/shard-fence.ts).
import { hash } from 'node:crypto'

/** Logical shards: fixed for the life of a database (the dedup store and the fence are keyed by it). */
export const SHARDS = 64

/** The 128-bit identity of an event, as two 64-bit halves in four 32-bit words (big-endian). */
export interface EventDigest {
  /** key = hi1:hi0 (UInt64), check = lo1:lo0 (UInt64) */
  hi1: number
  hi0: number
  lo1: number
  lo0: number
}

/** The digest of an event id (its shard). */
export function eventDigest(tenantId: string, environmentId: string, eventId: string): EventDigest {
  return digestOf(hash('md5', `${tenantId}\u0000${environmentId}\u0000${eventId}`, 'buffer'))
}

/** The dedup key of an event: its id and the timestamp it was sent with (epoch ms); its id alone when it was sent without one. */
export function eventKey(tenantId: string, environmentId: string, eventId: string, sentTimestampMs: number | undefined): EventDigest {
  if (sentTimestampMs === undefined) return eventDigest(tenantId, environmentId, eventId)
  return digestOf(hash('md5', `${tenantId}\u0000${environmentId}\u0000${eventId}\u0000${sentTimestampMs}`, 'buffer'))
}

function digestOf(d: Buffer): EventDigest {
  return { hi1: d.readUInt32BE(0), hi0: d.readUInt32BE(4), lo1: d.readUInt32BE(8), lo0: d.readUInt32BE(12) }
}

/** The shard of an event: its key mod SHARDS (the key's lowest bits). */
export function shardOf(d: EventDigest): number {
  return d.hi0 % SHARDS
}

export function eventShard(tenantId: string, environmentId: string, eventId: string): number {
  return shardOf(eventDigest(tenantId, environmentId, eventId))
}

export function partitionOfShard(shard: number, partitions: number): number {
  return shard % partitions
}

const TWO32 = 4294967296n
/** The dedup store's UInt64 columns as decimal strings (64-bit values do not survive as JSON numbers). */
export function keyText(d: EventDigest): string {
  return (BigInt(d.hi1) * TWO32 + BigInt(d.hi0)).toString()
}
export function checkText(d: EventDigest): string {
  return (BigInt(d.lo1) * TWO32 + BigInt(d.lo0)).toString()
}
