// The one module that owns ClickHouse access. Locally it runs the embedded chDB
// engine in-process (one data directory per process); with CLICKHOUSE_URL set it
// talks to a real ClickHouse server over HTTP. The SQL is the same for both.
import { createClient, type ClickHouseClient } from '@clickhouse/client'
import { createChdbConnection } from 'chdb/connection'
import { mkdirSync } from 'node:fs'
import type { Config } from '../platform/config.js'
import { clickhouseInsertSeconds } from '../platform/metrics.js'

export type QueryParams = Record<string, unknown>

/** DateTime64(3) literal in UTC, accepted by every ClickHouse input format without best-effort parsing. */
export function chDateTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '')
}

// Parsed chunks (parallel parsing) are squashed back into one block before the table sees them.
const ONE_BLOCK = { min_insert_block_size_rows: '1000000000', min_insert_block_size_bytes: String(64 * 1024 ** 3), max_insert_block_size: '1000000000' }

export class ClickHouse {
  private constructor(
    private readonly client: ClickHouseClient,
    readonly database: string,
    readonly embedded: boolean,
  ) {}

  static open(config: Config['clickhouse']): ClickHouse {
    if (config.url) {
      const client = createClient({
        url: config.url,
        username: config.user,
        password: config.password,
        request_timeout: 120_000,
        clickhouse_settings: { date_time_input_format: 'best_effort' },
      })
      return new ClickHouse(client, config.database, false)
    }
    mkdirSync(config.chdbPath, { recursive: true })
    const connection = createChdbConnection({ path: config.chdbPath })
    // The connection hook is typed against the client's internal Connection interface.
    const client = createClient({ connection } as unknown as Parameters<typeof createClient>[0])
    return new ClickHouse(client, config.database, true)
  }

  /** Fully qualified table name; every statement names its database explicitly. */
  table(name: string): string {
    return `${this.database}.${name}`
  }

  async command(query: string, params?: QueryParams, settings?: Record<string, string>): Promise<void> {
    await this.client.command({ query, query_params: params, clickhouse_settings: settings })
  }

  async query<T>(query: string, params?: QueryParams, settings?: Record<string, string>): Promise<T[]> {
    const result = await this.client.query({ query, query_params: params, format: 'JSONEachRow', clickhouse_settings: settings })
    return (await result.json()) as T[]
  }

  /** A statement's result as TabSeparated text (bulk numeric reads parse faster than JSON). */
  async queryText(query: string, settings?: Record<string, string>): Promise<string> {
    const result = await this.client.query({ query, format: 'TabSeparated', clickhouse_settings: settings })
    return result.text()
  }

  /** Rows are positional arrays in the table's column order (JSONCompactEachRow: the fastest text path). */
  async insertCompact(table: string, rows: unknown[][], settings?: Record<string, string>): Promise<void> {
    if (rows.length === 0) return
    const end = clickhouseInsertSeconds.startTimer({ table })
    try {
      await this.client.insert({ table: this.table(table), values: rows, format: 'JSONCompactEachRow', clickhouse_settings: settings })
    } finally {
      end()
    }
  }

  /**
   * One insert, one block: never cut by size, so that every month part the block becomes
   * carries all of its rows (the bucket ledger relies on it).
   */
  async insertOneBlock(table: string, rows: unknown[][]): Promise<void> {
    await this.insertCompact(table, rows, ONE_BLOCK)
  }

  async ping(): Promise<boolean> {
    const r = await this.client.ping()
    return r.success
  }

  async close(): Promise<void> {
    await this.client.close()
  }
}
