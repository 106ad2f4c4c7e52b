// The ClickHouse engine's memory as /metrics shows it (meterline_clickhouse_memory_bytes):
// tracked = every allocation the engine accounts for, caches included; the caches on their own
// beside it. Embedded (chDB) this is memory of our own process; with CLICKHOUSE_URL, the server's.
import client from 'prom-client'
import { registry } from '../platform/metrics.js'
import type { ClickHouse } from './client.js'

const PARTS: Record<string, string> = {
  MemoryTracking: 'tracked',
  MergesMutationsMemoryTracking: 'merges',
  MarkCacheBytes: 'mark_cache',
  PrimaryIndexCacheBytes: 'primary_index_cache',
  UncompressedCacheBytes: 'uncompressed_cache',
  QueryConditionCacheBytes: 'query_condition_cache',
  QueryCacheBytes: 'query_cache',
}
const SCRAPE_TIMEOUT_MS = 2000

let source: ClickHouse | undefined

new client.Gauge({
  name: 'meterline_clickhouse_memory_bytes',
  help: 'ClickHouse engine memory by part (tracked: all it accounts for, caches included)',
  labelNames: ['part'],
  registers: [registry],
  async collect() {
    if (!source) return
    const names = Object.keys(PARTS).map((n) => `'${n}'`).join(',')
    const read = source.query<{ metric: string; value: string }>(`SELECT metric, toString(value) AS value FROM system.metrics WHERE metric IN (${names})`)
    // A scrape never waits long on a busy engine: the last values stay.
    const rows = await Promise.race([read, new Promise<null>((r) => setTimeout(() => r(null), SCRAPE_TIMEOUT_MS).unref())]).catch(() => null)
    for (const row of rows ?? []) this.set({ part: PARTS[row.metric]! }, Number(row.value))
  },
})

/** Reports this engine's memory in /metrics until the returned function is called. */
export function reportClickHouseMemory(ch: ClickHouse): () => void {
  source = ch
  return () => {
    if (source === ch) source = undefined
  }
}
