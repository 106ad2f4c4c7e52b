// Which failures mean "a dependency is down" (answer 503 service_unavailable, the client
// retries) rather than "we have a bug" (500). Postgres errors arrive from pg, knex's pool or
// MikroORM's wrappers; Redis errors from ioredis with the offline queue off (platform/redis.ts).
export type Dependency = 'postgres' | 'redis'

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN'])
/**
 * SQLSTATE classes 08 (connection exception) and 57P (operator intervention: shutdown, restart),
 * too many connections, and the statement deadlines: 57014 (statement_timeout) and 55P03
 * (lock_timeout): the database did not serve the statement in time, the client retries.
 */
const PG_UNAVAILABLE_STATE = /^(08\d{3}|57P0[1-4]|53300|57014|55P03)$/
const POSTGRES_MESSAGES = /Timeout acquiring a connection|Connection terminated|terminating connection due to administrator command|the database system is (shutting down|starting up)|Client has encountered a connection error|Connection ended unexpectedly|Client was closed and is not queryable|^timeout expired$/i
const REDIS_MESSAGES = /enableOfflineQueue|Command timed out|Connection is closed|Reached the max retries per request limit/i

export function errorChain(err: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = []
  let cur = err as Record<string, unknown> | undefined
  for (let i = 0; cur && typeof cur === 'object' && i < 5; i++) {
    out.push(cur)
    cur = (cur.previous ?? cur.cause) as Record<string, unknown> | undefined
  }
  return out
}

const text = (v: unknown): string => (typeof v === 'string' || typeof v === 'number' ? String(v) : '')

/** The dependency an error says is unreachable, or undefined for any other error. */
export function unavailableDependency(err: unknown): Dependency | undefined {
  for (const e of errorChain(err)) {
    const name = text(e.name)
    const message = text(e.message)
    const code = text(e.code)
    if (name === 'MaxRetriesPerRequestError' || REDIS_MESSAGES.test(message)) return 'redis'
    if (name === 'KnexTimeoutError' || name === 'ConnectionException' || PG_UNAVAILABLE_STATE.test(code) || POSTGRES_MESSAGES.test(message)) return 'postgres'
    if (NETWORK_CODES.has(code)) return 'postgres'
  }
  return undefined
}
