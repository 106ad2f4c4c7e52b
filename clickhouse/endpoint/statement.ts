// One HTTP request in ClickHouse's HTTP interface, read the way the server reads it: the SQL from
// the `query` URL parameter, the body, or a multipart form; `param_*` values in their text form;
// every other URL parameter a setting, except the interface's own (query_id, database, ...).
import type { IncomingMessage } from 'node:http'

export interface Statement {
  sql: string
  /** rows sent after an INSERT's `FORMAT X` (the body when the SQL came in the URL) */
  data?: Buffer
  params: Record<string, string>
  settings: Map<string, string>
  queryId: string
  database?: string
  /** the result format: the SQL's FORMAT clause, else `default_format`, else TabSeparated */
  format: string
  compressResponse: boolean
  user?: string
  password?: string
}

// URL parameters of the HTTP interface itself, not settings.
const INTERFACE_PARAMS = new Set([
  'query', 'query_id', 'database', 'default_format', 'user', 'password', 'quota_key', 'session_id', 'session_timeout',
  'session_check', 'role', 'compress', 'decompress', 'buffer_size', 'wait_end_of_query', 'enable_http_compression',
  'send_progress_in_http_headers', 'http_headers_progress_interval_ms', 'http_zlib_compression_level', 'add_http_cors_header',
  'http_response_buffer_size', 'http_wait_end_of_query', 'http_native_compression_disable_checksumming_on_decompress',
])

const FORMAT_CLAUSE = /\bFORMAT\s+([A-Za-z][A-Za-z0-9]*)\s*;?\s*$/i

export function readStatement(req: IncomingMessage, body: Buffer, queryId: () => string): Statement {
  const url = new URL(req.url ?? '/', 'http://endpoint')
  const params: Record<string, string> = {}
  const settings = new Map<string, string>()
  for (const [k, v] of url.searchParams) {
    if (k.startsWith('param_')) params[k.slice(6)] = v
    else if (!INTERFACE_PARAMS.has(k)) settings.set(k, v)
  }
  // A GET may only read (the server runs it with readonly=2).
  if (req.method === 'GET') settings.set('readonly', '2')
  let sql = url.searchParams.get('query') ?? ''
  let data: Buffer | undefined
  const form = multipartBoundary(req.headers['content-type'])
  if (form) {
    for (const [name, value] of parseMultipart(body, form)) {
      if (name === 'query') sql = sql ? `${sql}\n${value}` : value
      else if (name.startsWith('param_')) params[name.slice(6)] = value
    }
  } else if (body.length > 0) {
    if (sql && /^\s*INSERT\b/i.test(sql)) data = body
    else sql = sql ? `${sql}\n${body.toString('utf8')}` : body.toString('utf8')
  }
  const [user, password] = credentials(req, url)
  return {
    sql, data, params, settings,
    queryId: url.searchParams.get('query_id') || queryId(),
    database: url.searchParams.get('database') ?? undefined,
    format: FORMAT_CLAUSE.exec(data ? '' : sql)?.[1] ?? url.searchParams.get('default_format') ?? 'TabSeparated',
    compressResponse: url.searchParams.get('enable_http_compression') === '1' && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? '')),
    user, password,
  }
}

function credentials(req: IncomingMessage, url: URL): [string | undefined, string | undefined] {
  const basic = /^Basic\s+(.+)$/i.exec(String(req.headers.authorization ?? ''))
  if (basic) {
    const text = Buffer.from(basic[1], 'base64').toString('utf8')
    const colon = text.indexOf(':')
    return colon < 0 ? [text, ''] : [text.slice(0, colon), text.slice(colon + 1)]
  }
  const user = req.headers['x-clickhouse-user'] ?? url.searchParams.get('user') ?? undefined
  const key = req.headers['x-clickhouse-key'] ?? url.searchParams.get('password') ?? undefined
  return [user === undefined ? undefined : String(user), key === undefined ? undefined : String(key)]
}

function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data/i.test(contentType)) return undefined
  return /boundary="?([^";]+)"?/i.exec(contentType)?.[1]
}

/** The named parts of a multipart/form-data body (text values; what the client sends for long parameters). */
export function parseMultipart(body: Buffer, boundary: string): [string, string][] {
  const parts: [string, string][] = []
  const text = body.toString('utf8')
  const delimiter = `--${boundary}`
  for (const chunk of text.split(delimiter).slice(1)) {
    if (chunk.startsWith('--')) break
    const headerEnd = chunk.indexOf('\r\n\r\n')
    if (headerEnd < 0) continue
    const name = /name="([^"]*)"/i.exec(chunk.slice(0, headerEnd))?.[1]
    if (name === undefined) continue
    // The value runs to the CRLF that precedes the next delimiter.
    parts.push([name, chunk.slice(headerEnd + 4, chunk.endsWith('\r\n') ? -2 : undefined)])
  }
  return parts
}
