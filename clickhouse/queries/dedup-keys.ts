// The dedup store (dedup_events): which events were counted, by which write, in (shard, event
// time, key) order (clickhouse/migrations/0007_dedup_by_time.sql).
import type { ClickHouse } from '../client.js'
import { isArrivalStamp } from '../../schemas/events.js'
import { checkText, eventKey, eventShard, keyText, type EventDigest } from '../../schemas/shards.js'

export type DedupKeyRow = [shard: number, ms: number, key: string, check: string, epoch: string, seq: string]

/** An event's place in the store: its shard, its timestamp (ms) and its dedup key. */
export interface StoredKey {
  shard: number
  ms: number
  d: EventDigest
}

/**
 * Where an event's key is kept. `ingestedAtMs`: its batch's arrival, which tells an event sent
 * without a timestamp (schemas/events.ts isArrivalStamp); absent: one sent with it.
 */
export function storedKeyOf(tenantId: string, environmentId: string, eventId: string, ms: number, ingestedAtMs?: number): StoredKey {
  const stamped = ingestedAtMs !== undefined && isArrivalStamp(ms, ingestedAtMs)
  return { shard: eventShard(tenantId, environmentId, eventId), ms, d: eventKey(tenantId, environmentId, eventId, stamped ? undefined : ms) }
}

/** `key:check` of a digest, as countedBy names the keys it found. */
export function keyName(d: EventDigest): string {
  return `${keyText(d)}:${checkText(d)}`
}

export async function insertDedupKeys(ch: ClickHouse, rows: DedupKeyRow[]): Promise<void> {
  await ch.insertCompact('dedup_events', rows)
}

const LOOKUP_CHUNK = 20_000
/** 20,000 keys are about 1.3 MB of statement text: above the default max_query_size (256 KiB). */
export const LOOKUP_SETTINGS = { max_query_size: String(8 * 1024 * 1024) }

/** A takeover's key stream that cannot be trusted: cut short, or holding text that is not keys. */
export class KeyStreamError extends Error {
  constructor(readonly shard: number, readonly reason: 'truncated' | 'corrupt', detail: string) {
    super(`the dedup keys of shard ${shard} arrived ${reason === 'truncated' ? 'cut short' : 'corrupt'}: ${detail}`)
  }
}

const WORD = 4294967295

/**
 * Every key of a shard with an event time from `fromMs` on (the hot window, and events in the
 * future), as the time and four 32-bit words, for the memory of a writer that takes the shard
 * over. Read in pages of `pageSize` keys in the table's order (shard, time, key), so the rows
 * read follow the window, not the history, and no answer is larger than a page. Every page is
 * parsed strictly: five numeric fields a line, each line ended by a newline, each word within 32
 * bits, rows in ascending order; an answer that ends early (a page shorter than asked for while
 * keys remain past its last one) or holds anything else (a server's exception text appended
 * mid-stream under status 200) throws KeyStreamError. On a replicated cluster the read must see
 * every acknowledged insert (sequential consistency).
 */
export async function forEachShardKey(
  ch: ClickHouse, shard: number, fromMs: number, each: (ms: number, hi1: number, hi0: number, lo1: number, lo0: number) => void,
  pageSize = 500_000,
): Promise<number> {
  const where = `shard = ${Number(shard)} AND ms >= ${Math.trunc(fromMs)}`
  const past = (a: Cursor | undefined) => (a ? ` AND (ms, key, check) > (${a.ms}, ${a.key}, ${a.check})` : '')
  let total = 0
  let after: Cursor | undefined
  for (;;) {
    const text = await ch.queryText(
      `SELECT ms, bitShiftRight(key, 32), bitAnd(key, 4294967295), bitShiftRight(check, 32), bitAnd(check, 4294967295)
         FROM ${ch.table('dedup_events')} WHERE ${where}${past(after)} ORDER BY ms, key, check LIMIT ${Math.floor(pageSize)}`,
    )
    const page = parseKeyPage(text, shard, after, each)
    total += page.rows
    if (page.last) after = page.last
    if (page.rows === pageSize) continue
    // A short page is the end only if nothing follows its last key.
    const [left] = await ch.query<{ n: string }>(`SELECT toString(count()) AS n FROM ${ch.table('dedup_events')} WHERE ${where}${past(after)}`)
    if (Number(left?.n ?? 0) > 0) throw new KeyStreamError(shard, 'truncated', `a page ended after ${page.rows} of ${pageSize} keys, and ${left.n} keys follow`)
    return total
  }
}

interface Cursor {
  ms: number
  key: bigint
  check: bigint
}

/** One page of TabSeparated keys; `after`: the previous page's last row (the order continues from it). */
function parseKeyPage(
  text: string, shard: number, after: Cursor | undefined,
  each: (ms: number, hi1: number, hi0: number, lo1: number, lo0: number) => void,
): { rows: number; last?: Cursor } {
  if (text.length > 0 && text.charCodeAt(text.length - 1) !== 10) throw new KeyStreamError(shard, 'truncated', 'the answer does not end with a whole line')
  const w = [0, 0, 0, 0, 0]
  let rows = 0
  let prev = after ? [after.ms, Number(after.key >> 32n), Number(after.key & 0xffffffffn), Number(after.check >> 32n), Number(after.check & 0xffffffffn)] : undefined
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
      } else if (c >= 48 && c <= 57 && digits < (col === 0 ? 15 : 10)) {
        v = v * 10 + (c - 48)
        digits++
      } else {
        throw new KeyStreamError(shard, 'corrupt', `line ${rows + 1}: ${JSON.stringify(text.slice(pos, Math.min(end, pos + 120)))}`)
      }
    }
    if (col !== 4 || digits === 0) throw new KeyStreamError(shard, 'corrupt', `line ${rows + 1} has ${col + (digits > 0 ? 1 : 0)} of 5 fields`)
    w[4] = v
    if (w[1] > WORD || w[2] > WORD || w[3] > WORD || w[4] > WORD) throw new KeyStreamError(shard, 'corrupt', `line ${rows + 1}: a value out of range`)
    if (prev && !ascending(prev, w)) throw new KeyStreamError(shard, 'corrupt', `line ${rows + 1}: keys out of order`)
    each(w[0], w[1], w[2], w[3], w[4])
    prev = [w[0], w[1], w[2], w[3], w[4]]
    rows++
    pos = end + 1
  }
  if (!prev || rows === 0) return { rows }
  return { rows, last: { ms: prev[0], key: (BigInt(prev[1]) << 32n) | BigInt(prev[2]), check: (BigInt(prev[3]) << 32n) | BigInt(prev[4]) } }
}

/** (ms, key, check) of `b` after `a`'s, or equal (a row written twice, not yet merged). */
function ascending(a: number[], b: number[]): boolean {
  for (let i = 0; i < 5; i++) if (a[i] !== b[i]) return b[i] > a[i]
  return true
}

export interface CountedBy {
  epoch: bigint
  seq: bigint
}

/** Which of these keys are counted, and by which write (`key:check` -> write): one statement per 20,000 keys. */
export async function countedBy(ch: ClickHouse, keys: StoredKey[]): Promise<Map<string, CountedBy>> {
  const out = new Map<string, CountedBy>()
  for (let i = 0; i < keys.length; i += LOOKUP_CHUNK) {
    const chunk = keys.slice(i, i + LOOKUP_CHUNK)
    const rows = await ch.query<{ k: string; c: string; e: string; s: string }>(lookupSql(ch, chunk), undefined, LOOKUP_SETTINGS)
    for (const r of rows) out.set(`${r.k}:${r.c}`, { epoch: BigInt(r.e), seq: BigInt(r.s) })
  }
  return out
}

/**
 * The keys travel as one TSV string read by format(), an IN subquery whose set the primary key
 * analysis uses: parsing 20,000 tuples written out as SQL cost about 0.8 s of a lookup on its
 * own, this string about 0.07 s (docs/benchmarks.md). Numbers only reach the text.
 */
export function lookupSql(ch: ClickHouse, keys: StoredKey[], table = 'dedup_events'): string {
  const tsv = keys.map((k) => `${Number(k.shard)}\\t${Math.trunc(k.ms)}\\t${keyText(k.d)}\\t${checkText(k.d)}`).join('\\n')
  return `SELECT toString(key) AS k, toString(check) AS c, toString(min(epoch)) AS e, toString(argMin(seq, epoch)) AS s
            FROM ${ch.table(table)}
           WHERE (shard, ms, key, check) IN (SELECT * FROM format(TSV, 'shard UInt16, ms Int64, key UInt64, check UInt64', '${tsv}'))
           GROUP BY key, check`
}
