// A failed statement as ClickHouse's HTTP interface reports it: the status its
// exceptionCodeToHTTPStatus gives the error's name, X-ClickHouse-Exception-Code, and the body
// "Code: N. DB::Exception: ... (NAME) (version V)" the client parses.

export interface EngineError {
  code: number
  name: string
  /** the whole text, as the server writes it */
  text: string
}

const FORBIDDEN = ['UNKNOWN_USER', 'WRONG_PASSWORD', 'AUTHENTICATION_FAILED', 'SET_NON_GRANTED_ROLE', 'ACCESS_DENIED']
const BAD_REQUEST = [
  'BAD_ARGUMENTS', 'CANNOT_COMPILE_REGEXP', 'CANNOT_PARSE_TEXT', 'CANNOT_PARSE_ESCAPE_SEQUENCE', 'CANNOT_PARSE_QUOTED_STRING',
  'CANNOT_PARSE_DATE', 'CANNOT_PARSE_DATETIME', 'CANNOT_PARSE_NUMBER', 'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING', 'CANNOT_PARSE_IPV4',
  'CANNOT_PARSE_IPV6', 'CANNOT_PARSE_INPUT_ASSERTION_FAILED', 'CANNOT_PARSE_UUID', 'DUPLICATE_COLUMN', 'ILLEGAL_COLUMN',
  'UNKNOWN_ELEMENT_IN_AST', 'UNKNOWN_TYPE_OF_AST_NODE', 'THERE_IS_NO_COLUMN', 'TOO_DEEP_AST', 'TOO_BIG_AST',
  'UNEXPECTED_AST_STRUCTURE', 'SYNTAX_ERROR', 'INCORRECT_DATA', 'TYPE_MISMATCH', 'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
]
const NOT_FOUND = [
  'UNKNOWN_TABLE', 'UNKNOWN_FUNCTION', 'UNKNOWN_IDENTIFIER', 'UNKNOWN_TYPE', 'UNKNOWN_STORAGE', 'UNKNOWN_DATABASE',
  'UNKNOWN_SETTING', 'UNKNOWN_DIRECTION_OF_SORTING', 'UNKNOWN_AGGREGATE_FUNCTION', 'UNKNOWN_FORMAT',
  'UNKNOWN_DATABASE_ENGINE', 'UNKNOWN_TYPE_OF_QUERY', 'UNKNOWN_ROLE',
]
const OTHER: Record<string, number> = {
  REQUIRED_PASSWORD: 401, QUERY_IS_TOO_LARGE: 413, NOT_IMPLEMENTED: 501, SOCKET_TIMEOUT: 503, CANNOT_OPEN_FILE: 503,
  HTTP_LENGTH_REQUIRED: 411, TIMEOUT_EXCEEDED: 408, CANNOT_SCHEDULE_TASK: 503, UNSUPPORTED_MEDIA_TYPE: 415,
}

export function httpStatusOf(name: string): number {
  if (FORBIDDEN.includes(name)) return 403
  if (BAD_REQUEST.includes(name)) return 400
  if (NOT_FOUND.includes(name)) return 404
  return OTHER[name] ?? 500
}

const ENGINE_ERROR = /Code: (\d+)\..*\(([A-Z0-9_]*[A-Z]{3}[A-Z0-9_]*)\)/s

/** The engine's error as the server would write it (an error without a code is STD_EXCEPTION, 1001). */
export function engineError(err: unknown, version: string): EngineError {
  const message = err instanceof Error ? err.message : String(err)
  const m = ENGINE_ERROR.exec(message)
  const text = m ? message.trim() : `Code: 1001. DB::Exception: ${message.trim()}. (STD_EXCEPTION)`
  const versioned = /\(version [^)]*\)\s*$/.test(text) ? text : `${text} (version ${version})`
  return { code: m ? Number(m[1]) : 1001, name: m ? m[2] : 'STD_EXCEPTION', text: `${versioned}\n` }
}

export function authenticationFailed(user: string, version: string): EngineError {
  return {
    code: 516, name: 'AUTHENTICATION_FAILED',
    text: `Code: 516. DB::Exception: ${user}: Authentication failed: password is incorrect, or there is no user with such name. (AUTHENTICATION_FAILED) (version ${version})\n`,
  }
}

/**
 * An exception after the status line went out (25.11+): the client finds it by the tag sent in
 * X-ClickHouse-Exception-Tag, at the end of the last chunk.
 */
export function midStreamException(error: EngineError, tag: string): string {
  const message = error.text.trimEnd()
  return `\r\n__exception__\r\n${tag}\r\n${message}\n${Buffer.byteLength(message) + 1} ${tag}\r\n__exception__\r\n`
}
