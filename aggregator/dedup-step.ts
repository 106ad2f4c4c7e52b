// The write stage's dedup step: which events of a write are new. Every event is checked in its
// shard's memory first (the hot window's keys, and every key counted since the last eviction);
// one older than the hot window that memory does not hold is checked in dedup_events, all of a
// write's such events in one lookup, before anything is counted. The first copy within a write
// wins. An event older than the dedup horizon is not counted (a copy of it may be forgotten).
// docs/architecture.md, "Dedup keys in memory and on disk".
import type { ClickHouse } from '../clickhouse/client.js'
import { countedBy, keyName } from '../clickhouse/queries/dedup-keys.js'
import { aggregatorColdKeys } from '../platform/metrics.js'
import type { EventDigest } from '../schemas/shards.js'
import { dayOf } from './key-set.js'
import type { ShardState } from './shard-table.js'

export interface DedupItem {
  state: ShardState
  /** the event's dedup key (schemas/shards.ts eventKey) */
  key: EventDigest
  /** the event's timestamp (ms) */
  ms: number
  result: { duplicates: number; skipped: Record<string, number>; cold?: number }
}

export interface DedupBounds {
  /** the hot window's start (ms): events from here on are decided by memory alone */
  hotFrom: number
  /** the first event day within the dedup horizon */
  keepFromDay: number
}

/** The new events of `items`, in their order. */
export async function newEvents<T extends DedupItem>(ch: ClickHouse, items: T[], bounds: DedupBounds): Promise<T[]> {
  const seen = new Set<string>()
  const candidates: { item: T; cold: boolean }[] = []
  for (const item of items) {
    const { state, key, ms, result } = item
    const id = `${state.shard}:${key.hi1}:${key.hi0}:${key.lo1}:${key.lo0}`
    if (state.keys.has(key) || seen.has(id)) {
      result.duplicates++
      continue
    }
    if (dayOf(ms) < bounds.keepFromDay) {
      result.skipped.expired = (result.skipped.expired ?? 0) + 1
      continue
    }
    seen.add(id)
    candidates.push({ item, cold: ms < bounds.hotFrom })
  }
  const cold = candidates.filter((c) => c.cold)
  if (cold.length === 0) return candidates.map((c) => c.item)
  const stored = await countedBy(ch, cold.map(({ item }) => ({ shard: item.state.shard, ms: item.ms, d: item.key })))
  aggregatorColdKeys.inc({ result: 'counted_before' }, stored.size)
  aggregatorColdKeys.inc({ result: 'new' }, cold.length - stored.size)
  const out: T[] = []
  for (const { item, cold: isCold } of candidates) {
    if (isCold) {
      item.result.cold = (item.result.cold ?? 0) + 1
      if (stored.has(keyName(item.key))) {
        item.result.duplicates++
        continue
      }
    }
    out.push(item)
  }
  return out
}
