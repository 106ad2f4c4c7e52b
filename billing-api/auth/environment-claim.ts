// Spec, Authentication 5: "the environment is taken from the environment_id claim of a JWT when
// present, otherwise from a request header". The API key still authenticates; a JWT sent as
// `Authorization: Bearer <jwt>` only selects the environment. It must be HS256-signed with
// AUTH_JWT_SECRET, within its exp/nbf, and, when it names a tenant_id, name the key's tenant.
// Without AUTH_JWT_SECRET a bearer token is refused rather than ignored, so a request never lands
// in another environment than the one its sender meant.
import { createHmac, timingSafeEqual } from 'node:crypto'
import { PermissionDeniedError } from '../../platform/errors.js'

export interface EnvironmentClaims {
  environment_id?: string
  tenant_id?: string
  exp?: number
  nbf?: number
}

const refuse = (why: string) => new PermissionDeniedError(`invalid JWT: ${why}`, 401)

function decodePart(part: string, what: string): Record<string, unknown> {
  let value: unknown
  try {
    value = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
  } catch {
    throw refuse(`${what} is not base64url JSON`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw refuse(`${what} is not a JSON object`)
  return value as Record<string, unknown>
}

export function verifyJwt(token: string, secret: Buffer, now: Date): EnvironmentClaims {
  const parts = token.split('.')
  if (parts.length !== 3) throw refuse('expected header.payload.signature')
  const [h, p, s] = parts
  const header = decodePart(h, 'header')
  if (header.alg !== 'HS256') throw refuse(`alg ${String(header.alg)} is not accepted (HS256 only)`)
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest()
  const given = Buffer.from(s, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refuse('bad signature')
  const claims = decodePart(p, 'payload')
  const seconds = now.getTime() / 1000
  for (const name of ['exp', 'nbf'] as const) {
    if (claims[name] !== undefined && typeof claims[name] !== 'number') throw refuse(`${name} must be a number`)
  }
  if (typeof claims.exp === 'number' && claims.exp <= seconds) throw refuse('expired')
  if (typeof claims.nbf === 'number' && claims.nbf > seconds) throw refuse('not valid yet')
  for (const name of ['environment_id', 'tenant_id'] as const) {
    if (claims[name] !== undefined && (typeof claims[name] !== 'string' || claims[name] === '')) throw refuse(`${name} must be a non-empty string`)
  }
  return claims as EnvironmentClaims
}

/** The environment a request's JWT names; undefined without a bearer token or without the claim. */
export function environmentFromJwt(authorization: string | undefined, secret: Buffer | null, tenantId: string, now: Date): string | undefined {
  if (!authorization) return undefined
  const m = /^Bearer\s+(\S+)$/i.exec(authorization)
  if (!m) throw new PermissionDeniedError('the Authorization header must be "Bearer <jwt>"', 401)
  if (!secret) throw new PermissionDeniedError('JWTs are not accepted here: AUTH_JWT_SECRET is not configured', 401)
  const claims = verifyJwt(m[1], secret, now)
  if (claims.tenant_id !== undefined && claims.tenant_id !== tenantId) throw new PermissionDeniedError('the JWT belongs to another tenant', 403)
  return claims.environment_id
}

/** For tests and tools: an HS256 JWT with these claims. */
export function signJwt(claims: Record<string, unknown>, secret: Buffer, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }): string {
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const body = `${enc(header)}.${enc(claims)}`
  return `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`
}
