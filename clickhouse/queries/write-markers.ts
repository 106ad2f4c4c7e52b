// In-doubt markers: rows of meter_buckets with meter_id '~doubt', one per (write, shard, month),
// in the same insert block as the buckets of that month. A marker names, by dedup key, the
// events whose buckets the block holds (key and timestamp), so whoever owns the shard next can finish the write
// (record those keys) instead of counting the events again. A month of the block becomes one
// part, atomically with its marker.
//
// The markers of one shard and month share one sorting key and carry their write's (epoch, seq)
// first in `ledger`, a max(String): merges keep the newest write's alone, so they take the room
// of one write per (shard, month) however many were written. Only the newest can be in doubt: a
// shard whose write failed after its block is recovered (its keys recorded, its done mark moved)
// before it writes again, and a taker does the same before its first write.
import type { ClickHouse } from '../client.js'
import type { EventDigest } from '../../schemas/shards.js'

export const MARKER_METER = '~doubt'

const pad = (n: bigint | number, width: number) => n.toString().padStart(width, '0')

/** `<epoch>|<seq>|`, zero-padded: text order is write order within a shard. */
const writeId = (epoch: bigint, seq: bigint) => `${pad(epoch, 12)}|${pad(seq, 12)}|`

/** The sorting key of a shard's markers (external_customer_id). */
const markerKey = (shard: number) => `${pad(shard, 3)}|w`

/** `<shard>|<epoch>|<seq>`: a marker of the earlier layout, one row per write, read until none is left after a done mark. */
const earlierId = (shard: number, epoch: bigint, seq: bigint) => `${pad(shard, 3)}|${writeId(epoch, seq).slice(0, -1)}`

/** A counted event's key and timestamp (ms): what a marker names, and what the dedup store keeps. */
export interface MarkedKey {
  d: EventDigest
  ms: number
}

/** Markers name their events by key and time (24 bytes each, base64), after this prefix. */
const FORMAT = '2:'

export function encodeKeys(keys: MarkedKey[]): string {
  const buf = Buffer.allocUnsafe(keys.length * 24)
  keys.forEach(({ d, ms }, i) => {
    const o = i * 24
    buf.writeUInt32BE(d.hi1, o)
    buf.writeUInt32BE(d.hi0, o + 4)
    buf.writeUInt32BE(d.lo1, o + 8)
    buf.writeUInt32BE(d.lo0, o + 12)
    buf.writeBigInt64BE(BigInt(ms), o + 16)
  })
  return FORMAT + buf.toString('base64')
}

export function decodeKeys(text: string): MarkedKey[] {
  if (!text.startsWith(FORMAT)) {
    throw new Error('an in-doubt write of the earlier key format (event id alone): start the earlier version once to finish it (npm run up, then npm run down), then upgrade')
  }
  const buf = Buffer.from(text.slice(FORMAT.length), 'base64')
  const out: MarkedKey[] = []
  for (let o = 0; o + 24 <= buf.length; o += 24) {
    out.push({ d: { hi1: buf.readUInt32BE(o), hi0: buf.readUInt32BE(o + 4), lo1: buf.readUInt32BE(o + 8), lo0: buf.readUInt32BE(o + 12) }, ms: Number(buf.readBigInt64BE(o + 16)) })
  }
  return out
}

/** The marker row of one write, shard and month (yyyymm). Column order of meter_buckets. */
export function markerRow(shard: number, epoch: bigint, seq: bigint, month: number, keys: MarkedKey[]): unknown[] {
  const monthStart = Date.UTC(Math.floor(month / 100), (month % 100) - 1, 1) / 1000
  return ['', '', MARKER_METER, markerKey(shard), monthStart, [], '', '0', 0, '0', [0, '', '0'], [], writeId(epoch, seq) + encodeKeys(keys), [], '']
}

export interface Marker {
  epoch: bigint
  seq: bigint
  keys: MarkedKey[]
}

type Write = { epoch: bigint; seq: bigint }

/** `<epoch>|<seq>|<keys>`: the write in front of its keys. */
function splitLedger(ledger: string): { write: Write; payload: string } {
  const a = ledger.indexOf('|')
  const b = ledger.indexOf('|', a + 1)
  return { write: { epoch: BigInt(ledger.slice(0, a)), seq: BigInt(ledger.slice(a + 1, b)) }, payload: ledger.slice(b + 1) }
}

/** A row of the earlier layout: the write in its id (`<shard>|<epoch>|<seq>`). */
function earlierRow(id: string, payload: string): { write: Write; payload: string } {
  const [, e, s] = id.split('|')
  return { write: { epoch: BigInt(e), seq: BigInt(s) }, payload }
}

/** Markers of a shard written after (epoch, seq), in write order (months of one write merged). */
export async function markersAfter(ch: ClickHouse, shard: number, epoch: bigint, seq: bigint): Promise<Marker[]> {
  const rows = await ch.query<{ id: string; keys: string }>(
    `SELECT external_customer_id AS id, ledger AS keys FROM ${ch.table('meter_buckets')}
      WHERE tenant_id = '' AND environment_id = '' AND meter_id = '${MARKER_METER}'
        AND external_customer_id > '${earlierId(shard, epoch, seq)}' AND external_customer_id < '${pad(shard, 3)}|~'`,
  )
  const writes = new Map<string, Marker>()
  for (const r of rows) {
    const { write, payload } = r.id === markerKey(shard) ? splitLedger(r.keys) : earlierRow(r.id, r.keys)
    if (write.epoch < epoch || (write.epoch === epoch && write.seq <= seq)) continue
    const id = writeId(write.epoch, write.seq)
    const m = writes.get(id) ?? writes.set(id, { ...write, keys: [] }).get(id)!
    m.keys.push(...decodeKeys(payload))
  }
  return [...writes.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, m]) => m)
}
