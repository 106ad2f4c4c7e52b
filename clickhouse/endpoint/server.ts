// A local ClickHouse endpoint: one process owns the embedded engine (chDB binds its data
// directory to one process) and serves ClickHouse's HTTP interface for what @clickhouse/client
// sends, so every other process reaches it with CLICKHOUSE_URL as it would a server. What it
// imitates and what it does not: README, "The local ClickHouse endpoint".
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { randomUUID } from 'node:crypto'
import { gunzipSync, gzipSync, inflateSync } from 'node:zlib'
import { Engine, engineVersion, type Outcome } from '../embedded/engine.js'
import { authenticationFailed, engineError, httpStatusOf, midStreamException, type EngineError } from './errors.js'
import { Faults } from './faults.js'
import { readStatement, type Statement } from './statement.js'

export interface EndpointOptions {
  /** the chDB data directory */
  path: string
  host: string
  /** 0: any free port */
  port: number
  connections: number
  user?: string
  password?: string
  faults?: boolean
}

export interface Endpoint {
  url: string
  port: number
  faults?: Faults
  close(): Promise<void>
}

// ClickHouse's max_uri_size (1 MiB): a longer request line fails there too.
const MAX_URI_BYTES = 1024 * 1024
const KEEP_ALIVE_MS = 10_000
const KILL_QUERY = /^\s*KILL\s+QUERY\s+WHERE\s+query_id\s*=\s*(?:\{(\w+):String\}|'([^']*)')\s*(SYNC|ASYNC)?\s*;?\s*$/i

export async function startEndpoint(opts: EndpointOptions): Promise<Endpoint> {
  const e: Served = { opts, engine: new Engine(opts.path, opts.connections), faults: opts.faults ? new Faults() : undefined, running: new Map() }
  const { engine, faults, running } = e
  const served = new WeakMap<Socket, number>()

  const server = createServer({ maxHeaderSize: MAX_URI_BYTES + 64 * 1024 }, (req, res) => {
    const uses = (served.get(req.socket) ?? 0) + 1
    served.set(req.socket, uses)
    handle(e, req, res, uses > 1).catch((err) => {
      if (!res.headersSent) fail(res, engineError(err, engineVersion()), '')
      else res.destroy()
    })
  })
  server.keepAliveTimeout = KEEP_ALIVE_MS

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port, opts.host, () => resolve())
  })
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : opts.port
  return {
    url: `http://${opts.host}:${port}`,
    port,
    faults,
    async close() {
      server.closeIdleConnections()
      await new Promise<void>((r) => server.close(() => r()))
      await Promise.allSettled([...running.values()])
      await engine.close()
    },
  }
}

/** What the endpoint's request handling shares. */
interface Served {
  opts: EndpointOptions
  engine: Engine
  faults: Faults | undefined
  /** statements by query_id, from the request's arrival to the statement's end */
  running: Map<string, Promise<unknown>>
}

/** One request: the health check, the fault controls, or a statement run on the engine. */
async function handle(e: Served, req: IncomingMessage, res: ServerResponse, reused: boolean): Promise<void> {
  const { opts, faults, running } = e
  const path = (req.url ?? '/').split('?')[0]
  if (path === '/ping' || (path === '/' && req.method === 'GET' && !req.url?.includes('query='))) {
    res.writeHead(200, { 'Content-Type': 'text/plain; charset=UTF-8' }).end('Ok.\n')
    return
  }
  if (path === '/__faults' && faults) return faultControl(req, res, faults)
  if (path !== '/') {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=UTF-8' }).end(`There is no handle ${req.url}\n\nUse / or /ping for health checks.\n`)
    return
  }
  const body = decode(await readBody(req), req.headers['content-encoding'])
  const st = readStatement(req, body, randomUUID)
  if (opts.user !== undefined && ((st.user ?? 'default') !== opts.user || (st.password ?? '') !== (opts.password ?? ''))) {
    return fail(res, authenticationFailed(st.user ?? 'default', engineVersion()), st.queryId)
  }
  if (faults && reused && faults.take('reset_reused_socket', st.sql)) {
    req.socket.destroy()
    return
  }
  const kill = KILL_QUERY.exec(st.sql)
  if (kill) return killQuery(e, res, st, kill[1] ? st.params[kill[1]] : kill[2], kill[3]?.toUpperCase() !== 'ASYNC')
  if (running.has(st.queryId)) {
    return fail(res, { code: 216, name: 'QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING', text: `Code: 216. DB::Exception: Query with id = ${st.queryId} is already running. (QUERY_WITH_SAME_ID_IS_ALREADY_RUNNING) (version ${engineVersion()})\n` }, st.queryId)
  }
  const outcome = start(e, st)
  let result: Outcome
  try {
    result = await outcome
  } catch (err) {
    return fail(res, engineError(err, engineVersion()), st.queryId)
  } finally {
    running.delete(st.queryId)
  }
  if (faults?.take('reset_after_commit', st.sql)) {
    req.socket.destroy()
    return
  }
  if (faults && !st.data && result.bytes.length > 0 && faults.take('error_mid_stream', st.sql)) return sendMidStreamError(res, st, result)
  send(res, st, result)
}

/** Runs a statement, known by its query_id until the caller removes it (KILL QUERY waits for it). */
function start({ engine, faults, running }: Served, st: Statement): Promise<Outcome> {
  const stall = faults?.take('stall_before_run', st.sql)
  const outcome = (async () => {
    if (stall) await new Promise((r) => setTimeout(r, stall.ms))
    return engine.run(st)
  })()
  running.set(st.queryId, outcome.catch(() => undefined))
  return outcome
}

/**
 * The engine cannot stop a statement it runs; KILL QUERY ... SYNC answers once the named
 * statement has ended, which is what a caller of SYNC relies on.
 */
async function killQuery({ opts, running }: Served, res: ServerResponse, st: Statement, id: string | undefined, sync: boolean): Promise<void> {
  const statement = id === undefined ? undefined : running.get(id)
  if (statement && sync) await statement
  const text = statement ? `finished\t${id}\t${opts.user ?? 'default'}\tKILL QUERY\n` : ''
  send(res, st, { bytes: Buffer.from(text), readRows: 0, readBytes: 0, writtenRows: 0, writtenBytes: 0, elapsedNs: 0 })
}

function send(res: ServerResponse, st: Statement, result: Outcome): void {
  let body = result.bytes
  const headers: Record<string, string> = {
    ...statementHeaders(st),
    'X-ClickHouse-Summary': JSON.stringify({
      read_rows: String(result.readRows), read_bytes: String(result.readBytes),
      written_rows: String(result.writtenRows), written_bytes: String(result.writtenBytes),
      total_rows_to_read: String(result.readRows), result_rows: st.data ? '0' : String(result.readRows),
      result_bytes: String(body.length), elapsed_ns: String(result.elapsedNs),
    }),
  }
  if (st.compressResponse && body.length > 0) {
    body = gzipSync(body)
    headers['Content-Encoding'] = 'gzip'
  }
  res.writeHead(200, headers).end(body)
}

function sendMidStreamError(res: ServerResponse, st: Statement, result: Outcome): void {
  const tag = randomUUID().replace(/-/g, '').slice(0, 16)
  res.writeHead(200, { ...statementHeaders(st), 'X-ClickHouse-Exception-Tag': tag })
  // Some whole rows first, then the exception where the next row would start.
  const half = result.bytes.subarray(0, result.bytes.length >> 1)
  const cut = half.lastIndexOf(0x0a) + 1
  res.write(result.bytes.subarray(0, cut))
  const error = engineError(new Error('Code: 241. DB::Exception: Memory limit (total) exceeded: injected by the endpoint. (MEMORY_LIMIT_EXCEEDED)'), engineVersion())
  res.end(midStreamException(error, tag))
}

function statementHeaders(st: Statement): Record<string, string> {
  return {
    'Content-Type': contentType(st.format),
    'X-ClickHouse-Query-Id': st.queryId,
    'X-ClickHouse-Format': st.format,
    'X-ClickHouse-Timezone': 'UTC',
    'X-ClickHouse-Server-Display-Name': 'meterline-chdb-endpoint',
  }
}

function fail(res: ServerResponse, error: EngineError, queryId: string): void {
  res.writeHead(httpStatusOf(error.name), {
    'Content-Type': 'text/plain; charset=UTF-8',
    'X-ClickHouse-Exception-Code': String(error.code),
    ...(queryId ? { 'X-ClickHouse-Query-Id': queryId } : {}),
  }).end(error.text)
}

function contentType(format: string): string {
  if (/^JSON/i.test(format)) return 'application/json; charset=UTF-8'
  if (/^(TSV|TabSeparated)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8'
  if (/^CSV/i.test(format)) return 'text/csv; charset=UTF-8'
  return 'text/plain; charset=UTF-8'
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

function decode(body: Buffer, encoding: string | string[] | undefined): Buffer {
  if (encoding === 'gzip') return gunzipSync(body)
  if (encoding === 'deflate') return inflateSync(body)
  if (encoding && encoding !== 'identity') throw new Error(`Code: 1001. DB::Exception: unsupported Content-Encoding ${String(encoding)}. (STD_EXCEPTION)`)
  return body
}

async function faultControl(req: IncomingMessage, res: ServerResponse, faults: Faults): Promise<void> {
  if (req.method === 'POST') {
    try {
      faults.set(JSON.parse((await readBody(req)).toString('utf8') || '[]'))
    } catch (err) {
      res.writeHead(400, { 'Content-Type': 'text/plain' }).end(`${(err as Error).message}\n`)
      return
    }
  }
  res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ injected: faults.injected, pending: faults.pending() }))
}
