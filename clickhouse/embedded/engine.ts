// The embedded engine (chDB) as a server runs statements: a few connections to one data
// directory, each carrying the settings of the statement it runs (a statement's settings never
// leak into the next one) and its parameters in their text form as the HTTP interface receives
// them. Parameters are set on the statement's connection (`SET param_x = '...'`, the session's
// own): the bindings' parameter argument sets a state shared by the whole process, which would
// make statements with parameters run one at a time. The in-process transport and the local
// endpoint both run statements here, so both modes behave alike.
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { mkdirSync } from 'node:fs'

interface NativeResult { bytes?: Uint8Array; rowsRead?: number; bytesRead?: number; rowsWritten?: number; bytesWritten?: number; elapsed?: number }
interface Native {
  CreateConnection(path: string): unknown
  CloseConnection?(connection: unknown): void
  QueryAsyncConnection(connection: unknown, sql: string, format: string, params?: Record<string, string>): Promise<NativeResult>
  InsertRawAsyncConnection(connection: unknown, prefix: string, data: Buffer, countLines: boolean): Promise<NativeResult>
}

const require = createRequire(import.meta.url)
// Loaded on first use: the native library takes a few hundred milliseconds to load, and a
// process that reaches ClickHouse over HTTP imports this module without ever opening the engine.
let loaded: Native | undefined
// The bindings' own loader: parameters go to the engine in their text form as the HTTP
// interface receives them (the package's JavaScript API would escape them a second time).
const native = (): Native => (loaded ??= (require(join(dirname(require.resolve('chdb')), 'dist/loader.js')) as { loadNative(): Native }).loadNative())
let version: string | undefined
/** The engine's version, as ClickHouse's error texts quote it. */
export function engineVersion(): string {
  // The bindings report it quoted ("26.7.2.1"); in a worker thread, as `unknown`.
  return (version ??= String((require('chdb') as { version(): { libchdb: unknown } }).version().libchdb).replace(/"/g, ''))
}

export interface Outcome {
  bytes: Buffer
  readRows: number
  readBytes: number
  writtenRows: number
  writtenBytes: number
  elapsedNs: number
}

interface Connection {
  handle: unknown
  /** settings this connection has away from their defaults */
  applied: Map<string, string>
  /** parameters set on this connection's session by earlier statements */
  params: Set<string>
  database: string
}

export interface EngineStatement {
  sql: string
  data?: Buffer
  params: Record<string, string>
  settings: Map<string, string>
  database?: string
  format: string
}

const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/
/** the engine's default max_query_size (256 KiB), less a margin */
const DEFAULT_MAX_QUERY_SIZE = 256 * 1024 - 1024
/** `{name:` of a query parameter in a statement's text (strings included: see `missingParam`) */
const PARAM_USE = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:/g
const INSERT_WITH_FORMAT = /^\s*INSERT\s+INTO\s+.+\s+FORMAT\s+(JSONEachRow|JSONCompactEachRow|TabSeparated|TSV|CSV)\s*$/is

export class Engine {
  private readonly idle: Connection[] = []
  private readonly waiting: ((c: Connection) => void)[] = []
  private readonly all: Connection[] = []
  private closed = false

  constructor(path: string, connections: number) {
    mkdirSync(path, { recursive: true })
    const key = resolve(path)
    for (let i = 0; i < connections; i++) this.idle.push({ handle: native().CreateConnection(key), applied: new Map(), params: new Set(), database: 'default' })
    this.all.push(...this.idle)
  }

  run(st: EngineStatement): Promise<Outcome> {
    return this.withConnection((c) => this.execute(c, st))
  }

  private async execute(c: Connection, st: EngineStatement): Promise<Outcome> {
    missingParam(c, st)
    await this.applySettings(c, st.settings)
    await setParams(c, st.params)
    if (st.database && st.database !== c.database) {
      await native().QueryAsyncConnection(c.handle, `USE ${quoteIdentifier(st.database)}`, 'TabSeparated')
      c.database = st.database
    }
    const t0 = process.hrtime.bigint()
    const raw = st.data && INSERT_WITH_FORMAT.test(st.sql)
      ? await native().InsertRawAsyncConnection(c.handle, st.sql.trim(), st.data, true)
      : await native().QueryAsyncConnection(c.handle, st.data ? `${st.sql}\n${st.data.toString('utf8')}` : st.sql, st.format)
    return {
      bytes: raw.bytes ? Buffer.from(raw.bytes.buffer, raw.bytes.byteOffset, raw.bytes.byteLength) : Buffer.alloc(0),
      readRows: raw.rowsRead ?? 0, readBytes: raw.bytesRead ?? 0,
      writtenRows: raw.rowsWritten ?? 0, writtenBytes: raw.bytesWritten ?? 0,
      elapsedNs: Number(process.hrtime.bigint() - t0),
    }
  }

  /** SET what differs from the connection's state, back to DEFAULT what this statement does not set. */
  private async applySettings(c: Connection, wanted: Map<string, string>): Promise<void> {
    const changes: string[] = []
    for (const name of c.applied.keys()) if (!wanted.has(name)) changes.push(`${name} = DEFAULT`)
    for (const [name, value] of wanted) {
      if (!SETTING_NAME.test(name)) throw new Error(`Code: 115. DB::Exception: Unknown setting '${name}'. (UNKNOWN_SETTING)`)
      if (c.applied.get(name) !== value) changes.push(`${name} = ${quoteString(value)}`)
    }
    if (changes.length === 0) return
    try {
      await native().QueryAsyncConnection(c.handle, `SET ${changes.join(', ')}`, 'TabSeparated')
      c.applied = new Map(wanted)
    } catch (err) {
      // The connection's state is unknown now: every setting this statement named goes back.
      const names = new Set([...c.applied.keys(), ...[...wanted.keys()].filter((n) => SETTING_NAME.test(n))])
      for (const name of names) await native().QueryAsyncConnection(c.handle, `SET ${name} = DEFAULT`, 'TabSeparated').catch(() => undefined)
      c.applied = new Map()
      throw err
    }
  }

  private async withConnection<T>(work: (c: Connection) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error('Code: 1001. DB::Exception: the engine is closed. (STD_EXCEPTION)')
    const c = this.idle.pop() ?? (await new Promise<Connection>((r) => this.waiting.push(r)))
    try {
      return await work(c)
    } finally {
      const next = this.waiting.shift()
      if (next) next(c)
      else this.idle.push(c)
    }
  }

  /** Waits (up to `graceMs`) for the statements running to end, then closes every connection. */
  async close(graceMs = 10_000): Promise<void> {
    if (this.closed) return
    this.closed = true
    const deadline = Date.now() + graceMs
    while (this.idle.length < this.all.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    for (const c of this.idle) native().CloseConnection?.(c.handle)
    this.idle.length = 0
  }
}

/** The statement's parameters, on its connection's session (values in their text form, as over HTTP). */
async function setParams(c: Connection, params: Record<string, string>): Promise<void> {
  const sets: string[] = []
  for (const [name, value] of Object.entries(params)) {
    // A name no `{name:Type}` can use: a server ignores it too.
    if (!SETTING_NAME.test(name)) continue
    sets.push(`param_${name} = ${quoteString(value)}`)
    c.params.add(name)
  }
  if (sets.length === 0) return
  const set = `SET ${sets.join(', ')}`
  const bytes = Buffer.byteLength(set)
  if (bytes < DEFAULT_MAX_QUERY_SIZE) return void (await native().QueryAsyncConnection(c.handle, set, 'TabSeparated'))
  // Over HTTP a parameter is no part of the statement's text: its size is not bounded by
  // max_query_size, so neither is this SET's. The statement's own value comes back after it.
  await native().QueryAsyncConnection(c.handle, `SET max_query_size = ${bytes + 1024}`, 'TabSeparated')
  try {
    await native().QueryAsyncConnection(c.handle, set, 'TabSeparated')
  } finally {
    const own = c.applied.get('max_query_size')
    await native().QueryAsyncConnection(c.handle, `SET max_query_size = ${own === undefined ? 'DEFAULT' : quoteString(own)}`, 'TabSeparated')
  }
}

/**
 * A session keeps its parameters: one the statement uses but does not send, and an earlier
 * statement on this connection did, would be substituted. A server fails such a statement, and so
 * does this. (A `{name:` inside a string literal counts too: none of our statements has one.)
 */
function missingParam(c: Connection, st: EngineStatement): void {
  if (c.params.size === 0) return
  for (const [, name] of st.sql.matchAll(PARAM_USE)) {
    if (!(name in st.params) && c.params.has(name)) {
      throw new Error('Code: 456. DB::Exception: Substitution `' + name + '` is not set. (UNKNOWN_QUERY_PARAMETER)')
    }
  }
}

function quoteString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``
}
