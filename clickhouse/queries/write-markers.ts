// In-doubt markers: rows of meter_buckets with meter_id '~doubt', one per (write, shard, month),
// in the same insert block as the buckets of that month. A marker names, by dedup key, the
// events whose buckets the block holds, so whoever owns the shard next can finish the write
// (record those keys) instead of counting the events again. A month of the block becomes one
// part, atomically with its marker.
import type { ClickHouse } from '../client.js'
import type { EventDigest } from '../../schemas/shards.js'

export const MARKER_METER = '~doubt'

const pad = (n: bigint | number, width: number) => n.toString().padStart(width, '0')

/** `<shard>|<epoch>|<seq>`, zero-padded: text order is write order within a shard. */
export function markerId(shard: number, epoch: bigint, seq: bigint): string {
  return `${pad(shard, 3)}|${pad(epoch, 12)}|${pad(seq, 12)}`
}

export function encodeDigests(digests: EventDigest[]): string {
  const buf = Buffer.allocUnsafe(digests.length * 16)
  digests.forEach((d, i) => {
    buf.writeUInt32BE(d.hi1, i * 16)
    buf.writeUInt32BE(d.hi0, i * 16 + 4)
    buf.writeUInt32BE(d.lo1, i * 16 + 8)
    buf.writeUInt32BE(d.lo0, i * 16 + 12)
  })
  return buf.toString('base64')
}

export function decodeDigests(text: string): EventDigest[] {
  const buf = Buffer.from(text, 'base64')
  const out: EventDigest[] = []
  for (let o = 0; o + 16 <= buf.length; o += 16) {
    out.push({ hi1: buf.readUInt32BE(o), hi0: buf.readUInt32BE(o + 4), lo1: buf.readUInt32BE(o + 8), lo0: buf.readUInt32BE(o + 12) })
  }
  return out
}

/** The marker row of one write, shard and month (yyyymm). Column order of meter_buckets. */
export function markerRow(shard: number, epoch: bigint, seq: bigint, month: number, digests: EventDigest[]): unknown[] {
  const monthStart = Date.UTC(Math.floor(month / 100), (month % 100) - 1, 1) / 1000
  return ['', '', MARKER_METER, markerId(shard, epoch, seq), monthStart, [], '', '0', 0, '0', [0, '', '0'], [], encodeDigests(digests), [], '']
}

export interface Marker {
  epoch: bigint
  seq: bigint
  digests: EventDigest[]
}

/** Markers of a shard written after (epoch, seq), in write order (months of one write merged). */
export async function markersAfter(ch: ClickHouse, shard: number, epoch: bigint, seq: bigint): Promise<Marker[]> {
  const rows = await ch.query<{ id: string; digests: string }>(
    `SELECT external_customer_id AS id, ledger AS digests FROM ${ch.table('meter_buckets')}
      WHERE tenant_id = '' AND environment_id = '' AND meter_id = '${MARKER_METER}'
        AND external_customer_id > '${markerId(shard, epoch, seq)}' AND external_customer_id < '${pad(shard, 3)}|~'
      ORDER BY id`,
  )
  const out: Marker[] = []
  for (const r of rows) {
    const [, e, s] = r.id.split('|')
    const last = out[out.length - 1]
    const digests = decodeDigests(r.digests)
    if (last && last.epoch === BigInt(e) && last.seq === BigInt(s)) last.digests.push(...digests)
    else out.push({ epoch: BigInt(e), seq: BigInt(s), digests })
  }
  return out
}
