// API-key authentication and tenancy scoping for every /v1 route (spec: Authentication).
// The tenant comes from the key; the environment from a JWT's environment_id claim
// (environment-claim.ts), else the X-Environment-ID header, when present (it must belong to the
// key's tenant), else the key's own environment.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { MikroORM } from '@mikro-orm/postgresql'
import { NotFoundError, PermissionDeniedError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import { unavailableDependency } from '../../platform/unavailable.js'
import { candidateHashes, type ApiKeyHashing, type StoredHash } from './api-key.js'
import type { RequestRateLimiter } from './request-rate-limit.js'
import type { AbuseLimiter } from '../../platform/abuse-limit.js'
import { authFailures } from '../../platform/metrics.js'
import { environmentFromJwt } from './environment-claim.js'
import { assertScopeAllows, type KeyScope } from '../http/route-access.js'

export const API_KEY_HEADER = 'x-api-key'
export const ENVIRONMENT_HEADER = 'x-environment-id'

import type { AuthContext } from '../http/request-auth.js'
export type { AuthContext }
export { requireRole, scopeOf } from '../http/request-auth.js'

interface KeyRow {
  id: string
  key_hash: string
  tenant_id: string
  environment_id: string
  user_id: string
  roles: string[]
  scope: KeyScope
  expires_at: Date | null
  rate_limit_per_key: number | null
  rate_limit_per_tenant: number | null
}

/**
 * With Postgres unreachable, a key seen before keeps its last answer, so ingest (which needs
 * nothing else from Postgres) keeps accepting events during the outage. Keys cannot be
 * revoked meanwhile: the API that revokes them needs Postgres too.
 */
async function staleOnOutage<T>(stale: T | null | undefined, query: () => Promise<T[]>): Promise<T[]> {
  try {
    return await query()
  } catch (err) {
    if (stale && unavailableDependency(err) === 'postgres') return [stale]
    throw err
  }
}

/** What the hook answers: no or a bad key (401), a JWT of another tenant (403), an unknown environment (404), a rate limit (429). */
export const AUTH_ERROR_STATUSES: readonly number[] = [401, 403, 404, 429]

/**
 * Returns the onRequest hook. Lookups are cached for `ttlMs` (a revoked key stops working
 * within that time); ingest calls this for every batch, so the cache matters. A key found
 * under an older hash (legacy SHA-256, or the previous HMAC secret) is re-hashed in place.
 * With a limiter, an authenticated request over its key's or tenant's rate limit is a 429.
 */
export function createAuthenticator(
  orm: MikroORM, clock: Clock, ttlMs: number, keyHashing: ApiKeyHashing, limiter?: RequestRateLimiter, jwtSecret: Buffer | null = null,
  abuse?: AbuseLimiter,
) {
  const conn = orm.em.getConnection()
  const keys = keyCache(conn, keyHashing, ttlMs)
  const envs = environmentCache(conn, ttlMs)
  const { cachedKey, lookupKey } = keys
  const { environmentBelongs } = envs

  const hook = async (request: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const raw = request.headers[API_KEY_HEADER]
    const key = Array.isArray(raw) ? raw[0] : raw
    if (!key) throw new PermissionDeniedError(`missing API key: send it in the ${API_KEY_HEADER} header`, 401)
    // An address over its failed-authentication limit gets 429 whatever key it sends, valid or
    // not, before any answer that depends on the key, so the answers say nothing about which
    // keys exist. A key that needs a Postgres lookup is looked up only for an address not
    // blocked. A cached key costs one Redis round trip: the failure count (which answers 429
    // exactly when the address was already blocked) or the address look with the request limits.
    let row = cachedKey(key)
    const addressChecked = row === undefined
    if (addressChecked) {
      await abuse?.assertNotBlocked('auth_failures', request.ip)
      row = await lookupKey(key)
    }
    if (!row || (row.expires_at && row.expires_at <= clock.now())) {
      authFailures.inc()
      abuse?.refuse('auth_failures', await abuse.count('auth_failures', request.ip))
      throw new PermissionDeniedError('invalid or expired API key', 401)
    }
    const rateLimits = { perKey: row.rate_limit_per_key, perTenant: row.rate_limit_per_tenant }
    const address = addressChecked ? null : abuse?.probe('auth_failures', request.ip)
    if (limiter) await limiter.admit({ apiKeyId: row.id, tenantId: row.tenant_id, rateLimits }, address)
    else if (address) await abuse!.assertNotBlocked('auth_failures', request.ip)
    const envHeader = request.headers[ENVIRONMENT_HEADER]
    const requested = environmentFromJwt(request.headers.authorization, jwtSecret, row.tenant_id, clock.now())
      ?? (typeof envHeader === 'string' && envHeader !== '' ? envHeader : undefined)
    let environmentId = row.environment_id
    if (requested !== undefined && requested !== row.environment_id) {
      if (!(await environmentBelongs(row.tenant_id, requested))) throw new NotFoundError('environment', requested)
      environmentId = requested
    }
    request.auth = {
      tenantId: row.tenant_id,
      environmentId,
      userId: row.user_id,
      apiKeyId: row.id,
      roles: row.roles ?? [],
      scope: row.scope,
      rateLimits,
    }
    assertScopeAllows(request, row.scope)
  }

  return { hook, invalidate: () => { keys.clear(); envs.clear() }, errorStatuses: AUTH_ERROR_STATUSES }
}

type Connection = ReturnType<MikroORM['em']['getConnection']>

/** API keys by hash, each answer kept for `ttlMs`. */
function keyCache(conn: Connection, keyHashing: ApiKeyHashing, ttlMs: number) {
  const keys = new Map<string, { row: KeyRow | null; until: number }>()

  async function upgradeHash(row: KeyRow, current: StoredHash): Promise<void> {
    try {
      await conn.execute(`UPDATE api_keys SET key_hash = ?, key_hash_scheme = ?, updated_at = now() WHERE id = ? AND key_hash = ?`, [current.hash, current.scheme, row.id, row.key_hash])
    } catch {
      // best effort: the next use tries again
    }
  }

  /** The cached answer for a key while it is fresh, else undefined (no I/O). */
  function cachedKey(plaintext: string): KeyRow | null | undefined {
    const hit = keys.get(candidateHashes(keyHashing, plaintext)[0]!.hash)
    return hit && hit.until > Date.now() ? hit.row : undefined
  }

  async function lookupKey(plaintext: string): Promise<KeyRow | null> {
    const candidates = candidateHashes(keyHashing, plaintext)
    const hash = candidates[0]!.hash
    const now = Date.now()
    const hit = keys.get(hash)
    if (hit && hit.until > now) return hit.row
    const rows = (await staleOnOutage(hit?.row, () => conn.execute(
      `SELECT k.id, k.key_hash, k.tenant_id, k.environment_id, k.user_id, u.roles, k.scope, k.expires_at, t.rate_limit_per_key, t.rate_limit_per_tenant
         FROM api_keys k JOIN users u ON u.id = k.user_id AND u.tenant_id = k.tenant_id
         JOIN tenants t ON t.id = k.tenant_id
        WHERE k.key_hash IN (?) AND k.status = 'published' AND u.status = 'published' AND t.status = 'published'`,
      [candidates.map((c) => c.hash)],
    ))) as KeyRow[]
    const row = rows[0] ? { ...rows[0], expires_at: rows[0].expires_at ? new Date(rows[0].expires_at) : null } : null
    if (row && row.key_hash !== hash) {
      await upgradeHash(row, candidates[0]!)
      row.key_hash = hash
    }
    if (keys.size > 10_000) keys.clear()
    keys.set(hash, { row, until: now + ttlMs })
    return row
  }

  return { cachedKey, lookupKey, clear: () => keys.clear() }
}

/** Whether an environment belongs to a tenant, each answer kept for `ttlMs`. */
function environmentCache(conn: Connection, ttlMs: number) {
  const envs = new Map<string, { ok: boolean; until: number }>()

  async function environmentBelongs(tenantId: string, environmentId: string): Promise<boolean> {
    const k = `${tenantId}/${environmentId}`
    const now = Date.now()
    const hit = envs.get(k)
    if (hit && hit.until > now) return hit.ok
    const rows = await staleOnOutage(hit?.ok ? {} : undefined, () => conn.execute(
      `SELECT 1 FROM environments WHERE id = ? AND tenant_id = ? AND status = 'published'`,
      [environmentId, tenantId],
    ))
    const ok = rows.length > 0
    if (envs.size > 10_000) envs.clear()
    envs.set(k, { ok, until: now + ttlMs })
    return ok
  }

  return { environmentBelongs, clear: () => envs.clear() }
}
