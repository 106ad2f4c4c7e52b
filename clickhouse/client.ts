// The one module that owns ClickHouse access. With CLICKHOUSE_URL set it talks to a ClickHouse
// server over HTTP (a real one, or the local endpoint that serves the embedded engine:
// clickhouse/endpoint/); without it, the embedded chDB engine runs in this process (one data
// directory per process; clickhouse/embedded/). The SQL is the same for both; only the transport
// differs, and an aggregator in a worker thread reaches the process's engine through a message
// port (clickhouse/thread-transport.ts).
import { Readable } from 'node:stream'
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client'
import { EmbeddedTransport } from './embedded/transport.js'
import type { Config } from '../platform/config.js'
import { clickhouseInsertSeconds } from '../platform/metrics.js'

export type { ClickHouseTransport, QueryParams, Settings } from './transport.js'
import type { ClickHouseTransport, QueryParams, Settings } from './transport.js'

/** DateTime64(3) literal in UTC, accepted by every ClickHouse input format without best-effort parsing. */
export function chDateTime(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ').replace('Z', '')
}

// Parsed chunks (parallel parsing) are squashed back into one block before the table sees them.
// A write's rows may span many partitions (dedup keys: a day each; meter rows: a month each):
// with no event-age limit (INGEST_MAX_EVENT_AGE_DAYS=0) more than the server's default 100, and
// a write refused for it would be refused on every replay.
const ANY_PARTITIONS = { max_partitions_per_insert_block: '0' }
const ONE_BLOCK = { min_insert_block_size_rows: '1000000000', min_insert_block_size_bytes: String(64 * 1024 ** 3), max_insert_block_size: '1000000000' }

class ClientTransport implements ClickHouseTransport {
  constructor(private readonly client: ClickHouseClient) {}

  async command(query: string, params?: QueryParams, settings?: Settings): Promise<void> {
    await this.client.command({ query, query_params: params, clickhouse_settings: settings })
  }

  async queryJson(query: string, params?: QueryParams, settings?: Settings): Promise<unknown[]> {
    const result = await this.client.query({ query, query_params: params, format: 'JSONEachRow', clickhouse_settings: settings })
    return result.json()
  }

  async queryText(query: string, settings?: Settings): Promise<string> {
    const result = await this.client.query({ query, format: 'TabSeparated', clickhouse_settings: settings })
    return result.text()
  }

  async insert(table: string, body: Uint8Array, settings?: Settings, queryId?: string): Promise<void> {
    // The lines are already JSONCompactEachRow: exec sends the bytes as they are (insert() would
    // encode each chunk again as a JSON value).
    const result = await this.client.exec({
      query: `INSERT INTO ${table} FORMAT JSONCompactEachRow`,
      values: Readable.from([Buffer.from(body.buffer, body.byteOffset, body.byteLength)], { objectMode: false }),
      clickhouse_settings: settings, query_id: queryId,
    })
    for await (const _ of result.stream) {
      // an insert answers with an empty body; read it so the socket goes back to the pool
    }
  }

  async settle(queryId: string): Promise<void> {
    // A server: kill it if it still runs (SYNC waits for the kill), then make sure it is gone.
    for (let attempt = 0; ; attempt++) {
      await this.client.command({ query: 'KILL QUERY WHERE query_id = {id:String} SYNC', query_params: { id: queryId } })
      const running = await this.client.query({ query: 'SELECT count() AS n FROM system.processes WHERE query_id = {id:String}', query_params: { id: queryId }, format: 'JSONEachRow' })
      const [row] = await running.json<{ n: string | number }>()
      if (Number(row?.n ?? 0) === 0) return
      if (attempt >= 50) throw new Error(`statement ${queryId} is still running on the server after KILL QUERY`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  async ping(): Promise<boolean> {
    return (await this.client.ping()).success
  }

  close(): Promise<void> {
    return this.client.close()
  }
}

export class ClickHouse {
  private constructor(
    private readonly transport: ClickHouseTransport,
    readonly database: string,
    readonly embedded: boolean,
  ) {}

  static open(config: Config['clickhouse']): ClickHouse {
    return new ClickHouse(openTransport(config), config.database, !config.url)
  }

  /** The same database through another transport (an aggregator thread's port to the engine). */
  static over(transport: ClickHouseTransport, config: Config['clickhouse']): ClickHouse {
    return new ClickHouse(transport, config.database, !config.url)
  }

  /** The same database through a transport that wraps this one's (fault injection in tests). */
  through(wrap: (inner: ClickHouseTransport) => ClickHouseTransport): ClickHouse {
    return new ClickHouse(wrap(this.transport), this.database, this.embedded)
  }

  /** Fully qualified table name; every statement names its database explicitly. */
  table(name: string): string {
    return `${this.database}.${name}`
  }

  command(query: string, params?: QueryParams, settings?: Settings): Promise<void> {
    return this.transport.command(query, params, settings)
  }

  async query<T>(query: string, params?: QueryParams, settings?: Settings): Promise<T[]> {
    return (await this.transport.queryJson(query, params, settings)) as T[]
  }

  /** A statement's result as TabSeparated text (bulk numeric reads parse faster than JSON). */
  queryText(query: string, settings?: Settings): Promise<string> {
    return this.transport.queryText(query, settings)
  }

  /** Rows are positional arrays in the table's column order (JSONCompactEachRow: the fastest text path). */
  async insertCompact(table: string, rows: unknown[][], settings?: Settings, queryId?: string): Promise<void> {
    if (rows.length === 0) return
    const end = clickhouseInsertSeconds.startTimer({ table })
    try {
      await this.transport.insert(this.table(table), compactRows(rows), { ...ANY_PARTITIONS, ...settings }, queryId)
    } finally {
      end()
    }
  }

  /**
   * One insert, one block: never cut by size, so that every month part the block becomes
   * carries all of its rows (the bucket ledger relies on it).
   */
  async insertOneBlock(table: string, rows: unknown[][], queryId?: string): Promise<void> {
    await this.insertCompact(table, rows, ONE_BLOCK, queryId)
  }

  /**
   * See ClickHouseTransport.settle. While the server cannot be asked, it keeps asking (for about
   * a minute: its caller holds a fence meanwhile), then gives up and says so.
   */
  async settle(queryId: string, log?: (msg: string, err?: unknown) => void): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.transport.settle(queryId)
      } catch (err) {
        if (attempt >= 12) {
          log?.(`could not make sure the failed insert ${queryId} ended; a takeover may count its rows again if it still lands`, err)
          return
        }
        await new Promise((r) => setTimeout(r, Math.min(500 * attempt, 5000)))
      }
    }
  }

  ping(): Promise<boolean> {
    return this.transport.ping()
  }

  close(): Promise<void> {
    return this.transport.close()
  }
}

export function openTransport(config: Config['clickhouse']): ClickHouseTransport {
  if (!config.url) return new EmbeddedTransport(config.chdbPath, config.chdbConnections)
  const client = createClient({
    url: config.url,
    username: config.user,
    password: config.password,
    request_timeout: config.requestTimeoutMs,
    // Failures reach our callers, who log them once with their context.
    log: { level: ClickHouseLogLevel.OFF },
    clickhouse_settings: {
      date_time_input_format: 'best_effort',
      // One rule in every mode: a block sent twice is stored twice (the write path's ledger, not
      // the server, decides what was counted; replicated tables would otherwise drop a retry).
      insert_deduplicate: 0,
    },
  })
  return new ClientTransport(client)
}

/** JSONCompactEachRow: one JSON array per line, as the client itself would write them. */
export function compactRows(rows: unknown[][]): Buffer {
  let text = ''
  for (const row of rows) text += JSON.stringify(row) + '\n'
  return Buffer.from(text)
}
