// The dedup store (event_keys, EmbeddedRocksDB): which events were already counted.
import type { ClickHouse } from '../client.js'

/** Keys go into the statement as UInt64 literals: RocksDB answers `key IN (literals)` with point lookups. */
const LOOKUP_CHUNK = 50_000
const BIG_STATEMENT = { max_query_size: String(64 * 1024 * 1024) }

/** key -> check of the keys that are present. */
export async function lookupEventKeys(ch: ClickHouse, keys: string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  for (let i = 0; i < keys.length; i += LOOKUP_CHUNK) {
    const chunk = keys.slice(i, i + LOOKUP_CHUNK)
    const rows = await ch.query<{ k: string; c: string }>(
      `SELECT toString(key) AS k, toString(check) AS c FROM ${ch.table('event_keys')} WHERE key IN (${chunk.join(',')})`,
      undefined,
      BIG_STATEMENT,
    )
    for (const r of rows) found.set(r.k, r.c)
  }
  return found
}

export async function insertEventKeys(ch: ClickHouse, rows: [key: string, check: string][]): Promise<void> {
  await ch.insertCompact('event_keys', rows)
}
