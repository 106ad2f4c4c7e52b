// The in-process transport: statements go to the embedded engine as the HTTP client would send
// them (parameters in their text form, settings per statement), and failures come back as the
// client's ClickHouseError with the server's code and type.
import { formatQueryParams, parseError } from '@clickhouse/client-common'
import type { ClickHouseTransport, QueryParams, Settings } from '../transport.js'
import { Engine, type EngineStatement } from './engine.js'

export class EmbeddedTransport implements ClickHouseTransport {
  private readonly engine: Engine

  constructor(path: string, connections: number) {
    this.engine = new Engine(path, connections)
  }

  private async run(statement: Omit<EngineStatement, 'params' | 'settings'>, params?: QueryParams, settings?: Settings): Promise<Buffer> {
    const text: Record<string, string> = {}
    for (const [k, v] of Object.entries(params ?? {})) text[k] = formatQueryParams({ value: v })
    try {
      return (await this.engine.run({ ...statement, params: text, settings: new Map(Object.entries(settings ?? {})) })).bytes
    } catch (err) {
      throw parseError(err instanceof Error ? err.message : String(err))
    }
  }

  async command(query: string, params?: QueryParams, settings?: Settings): Promise<void> {
    await this.run({ sql: query, format: 'TabSeparated' }, params, settings)
  }

  async queryJson(query: string, params?: QueryParams, settings?: Settings): Promise<unknown[]> {
    const text = (await this.run({ sql: withFormat(query, 'JSONEachRow'), format: 'JSONEachRow' }, params, settings)).toString('utf8')
    const rows: unknown[] = []
    for (const line of text.split('\n')) if (line) rows.push(JSON.parse(line))
    return rows
  }

  async queryText(query: string, settings?: Settings): Promise<string> {
    return (await this.run({ sql: withFormat(query, 'TabSeparated'), format: 'TabSeparated' }, undefined, settings)).toString('utf8')
  }

  async insert(table: string, body: Uint8Array, settings?: Settings): Promise<void> {
    if (body.byteLength === 0) return
    const data = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
    await this.run({ sql: `INSERT INTO ${table} FORMAT JSONCompactEachRow`, data, format: 'TabSeparated' }, undefined, settings)
  }

  /** The engine runs a statement inside this process: when its promise failed, it ended. */
  async settle(): Promise<void> {}

  async ping(): Promise<boolean> {
    try {
      await this.run({ sql: 'SELECT 1', format: 'TabSeparated' })
      return true
    } catch {
      return false
    }
  }

  close(): Promise<void> {
    return this.engine.close()
  }
}

/** As the HTTP client sends a query: the format appended (a query that names one fails, as there). */
function withFormat(query: string, format: string): string {
  return `${query.trim().replace(/;$/, '')} \nFORMAT ${format}`
}
