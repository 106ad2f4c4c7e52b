// The dedup store (dedup_keys): which events were counted, by which write.
import type { ClickHouse } from '../client.js'

export type DedupKeyRow = [shard: number, key: string, check: string, epoch: string, seq: string, eventDay: string]

const days = new Map<number, string>()
/** A UTC day number as the Date column's text (memoised: a write's events share a few days). */
export function dayText(day: number): string {
  let t = days.get(day)
  if (t === undefined) {
    if (days.size > 4096) days.clear()
    days.set(day, (t = new Date(day * 86_400_000).toISOString().slice(0, 10)))
  }
  return t
}

export async function insertDedupKeys(ch: ClickHouse, rows: DedupKeyRow[]): Promise<void> {
  await ch.insertCompact('dedup_keys', rows)
}

/** A takeover's key stream that cannot be trusted: cut short, or holding text that is not keys. */
export class KeyStreamError extends Error {
  constructor(readonly shard: number, readonly reason: 'truncated' | 'corrupt', detail: string) {
    super(`the dedup keys of shard ${shard} arrived ${reason === 'truncated' ? 'cut short' : 'corrupt'}: ${detail}`)
  }
}

const WORD = 4294967295

/**
 * Every key of a shard from event day `fromDay` on, as four 32-bit words and the day, for the
 * memory of a writer that takes the shard over. Read in pages of `pageSize` keys in key order
 * (the table's sort key), so no answer is larger than a page. Every page is parsed strictly:
 * five numeric fields a line, each line ended by a newline, each word within 32 bits, keys in
 * ascending order; an answer that ends early (a page shorter than asked for while keys remain
 * past its last one) or holds anything else (a server's exception text appended mid-stream under
 * status 200) throws KeyStreamError. On a replicated cluster the read must see every
 * acknowledged insert (sequential consistency).
 */
export async function forEachShardKey(
  ch: ClickHouse, shard: number, fromDay: number, each: (hi1: number, hi0: number, lo1: number, lo0: number, day: number) => void,
  pageSize = 500_000,
): Promise<number> {
  const where = `shard = ${Number(shard)} AND toUInt16(event_day) >= ${Math.max(0, Math.floor(fromDay))}`
  const select = `SELECT bitShiftRight(key, 32), bitAnd(key, 4294967295), bitShiftRight(check, 32), bitAnd(check, 4294967295), toUInt16(event_day)
                    FROM ${ch.table('dedup_keys')}`
  let total = 0
  let after: { key: bigint; check: bigint } | undefined
  for (;;) {
    const past = after ? ` AND key >= ${after.key} AND (key > ${after.key} OR check > ${after.check})` : ''
    const text = await ch.queryText(`${select} WHERE ${where}${past} ORDER BY key, check LIMIT ${Math.floor(pageSize)}`)
    const page = parseKeyPage(text, shard, after, each)
    total += page.rows
    if (page.last) after = page.last
    if (page.rows === pageSize) continue
    // A short page is the end only if nothing follows its last key.
    const rest = after ? ` AND key >= ${after.key} AND (key > ${after.key} OR check > ${after.check})` : ''
    const [left] = await ch.query<{ n: string }>(`SELECT toString(count()) AS n FROM ${ch.table('dedup_keys')} WHERE ${where}${rest}`)
    if (Number(left?.n ?? 0) > 0) throw new KeyStreamError(shard, 'truncated', `a page ended after ${page.rows} of ${pageSize} keys, and ${left.n} keys follow`)
    return total
  }
}

/** One page of TabSeparated keys; `after`: the previous page's last key (the order continues from it). */
function parseKeyPage(
  text: string, shard: number, after: { key: bigint; check: bigint } | undefined,
  each: (hi1: number, hi0: number, lo1: number, lo0: number, day: number) => void,
): { rows: number; last?: { key: bigint; check: bigint } } {
  if (text.length > 0 && text.charCodeAt(text.length - 1) !== 10) throw new KeyStreamError(shard, 'truncated', 'the answer does not end with a whole line')
  const w = [0, 0, 0, 0, 0]
  let rows = 0
  let prev = after ? [Number(after.key >> 32n), Number(after.key & 0xffffffffn), Number(after.check >> 32n), Number(after.check & 0xffffffffn)] : undefined
  let pos = 0
  while (pos < text.length) {
    const end = text.indexOf('\n', pos)
    let col = 0
    let v = 0
    let digits = 0
    for (let i = pos; i < end; i++) {
      const c = text.charCodeAt(i)
      if (c === 9 && digits > 0 && col < 4) {
        w[col++] = v
        v = 0
        digits = 0
      } else if (c >= 48 && c <= 57 && digits < 10) {
        v = v * 10 + (c - 48)
        digits++
      } else {
        throw new KeyStreamError(shard, 'corrupt', `line ${rows + 1}: ${JSON.stringify(text.slice(pos, Math.min(end, pos + 120)))}`)
      }
    }
    if (col !== 4 || digits === 0) throw new KeyStreamError(shard, 'corrupt', `line ${rows + 1} has ${col + (digits > 0 ? 1 : 0)} of 5 fields`)
    w[4] = v
    if (w[0] > WORD || w[1] > WORD || w[2] > WORD || w[3] > WORD || w[4] > 65535) throw new KeyStreamError(shard, 'corrupt', `line ${rows + 1}: a value out of range`)
    if (prev && !ascending(prev, w)) throw new KeyStreamError(shard, 'corrupt', `line ${rows + 1}: keys out of order`)
    each(w[0], w[1], w[2], w[3], w[4])
    prev = [w[0], w[1], w[2], w[3]]
    rows++
    pos = end + 1
  }
  if (!prev || rows === 0) return { rows }
  return { rows, last: { key: (BigInt(prev[0]) << 32n) | BigInt(prev[1]), check: (BigInt(prev[2]) << 32n) | BigInt(prev[3]) } }
}

/** (key, check) of `b` after `a`'s, or equal (a row written twice, not yet merged). */
function ascending(a: number[], b: number[]): boolean {
  for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return b[i] > a[i]
  return true
}

export interface CountedBy {
  epoch: bigint
  seq: bigint
}

/** For a backfill: which of these keys are counted, and by which write. `keys`: [shard, key, check]. */
export async function countedBy(ch: ClickHouse, keys: [number, string, string][]): Promise<Map<string, CountedBy>> {
  const out = new Map<string, CountedBy>()
  if (keys.length === 0) return out
  const shards = [...new Set(keys.map((k) => k[0]))]
  const rows = await ch.query<{ k: string; c: string; e: string; s: string }>(
    `SELECT toString(key) AS k, toString(check) AS c, toString(min(epoch)) AS e, toString(argMin(seq, epoch)) AS s
       FROM ${ch.table('dedup_keys')}
      WHERE shard IN (${shards.map(Number).join(',')}) AND key IN (SELECT arrayJoin(arrayMap(x -> toUInt64(x), {keys:Array(String)})))
      GROUP BY key, check`,
    { keys: keys.map((k) => k[1]) },
  )
  for (const r of rows) out.set(`${r.k}:${r.c}`, { epoch: BigInt(r.e), seq: BigInt(r.s) })
  return out
}
