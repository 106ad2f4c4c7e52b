// The dedup store (event_keys, EmbeddedRocksDB): which events were already counted.
import type { ClickHouse } from '../client.js'

const LOOKUP_CHUNK = 50_000

/** key -> check of the keys that are present. */
export async function lookupEventKeys(ch: ClickHouse, keys: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  for (let i = 0; i < keys.length; i += LOOKUP_CHUNK) {
    const chunk = keys.slice(i, i + LOOKUP_CHUNK)
    // RocksDB answers `key IN (set)` with point lookups. The keys travel as a parameter
    // (decimal strings: 64-bit values do not survive as JSON numbers).
    const rows = await ch.query<{ k: string; c: string }>(
      `SELECT toString(key) AS k, toString(check) AS c FROM ${ch.table('event_keys')}
        WHERE key IN (SELECT arrayJoin(arrayMap(x -> toUInt64(x), {keys:Array(String)})))`,
      { keys: chunk },
    )
    for (const r of rows) found.set(r.k, r.c)
  }
  return found
}

export async function insertEventKeys(ch: ClickHouse, rows: [key: string, check: string][]): Promise<void> {
  await ch.insertCompact('event_keys', rows)
}
