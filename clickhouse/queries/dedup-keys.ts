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

/**
 * Every key of a shard from event day `fromDay` on, as four 32-bit words and the day
 * (tab-separated numbers parse without BigInt), for the memory of a writer that takes the shard
 * over. On a replicated cluster the read must see every acknowledged insert (sequential consistency).
 */
export async function forEachShardKey(
  ch: ClickHouse, shard: number, fromDay: number, each: (hi1: number, hi0: number, lo1: number, lo0: number, day: number) => void,
): Promise<number> {
  const text = await ch.queryText(
    `SELECT bitShiftRight(key, 32), bitAnd(key, 4294967295), bitShiftRight(check, 32), bitAnd(check, 4294967295), toUInt16(event_day)
       FROM ${ch.table('dedup_keys')} WHERE shard = ${Number(shard)} AND toUInt16(event_day) >= ${Math.max(0, Math.floor(fromDay))}`,
  )
  let n = 0
  let pos = 0
  const w = [0, 0, 0, 0, 0]
  while (pos < text.length) {
    let end = text.indexOf('\n', pos)
    if (end < 0) end = text.length
    let col = 0
    let v = 0
    for (let i = pos; i < end; i++) {
      const c = text.charCodeAt(i)
      if (c === 9) {
        w[col++] = v
        v = 0
      } else v = v * 10 + (c - 48)
    }
    if (end > pos) {
      w[col] = v
      each(w[0], w[1], w[2], w[3], w[4])
      n++
    }
    pos = end + 1
  }
  return n
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
