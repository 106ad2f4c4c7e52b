// What authentication leaves on every /v1 request (auth/authenticate.ts sets it), and the
// tenancy scope routes read from it.
import type { FastifyRequest } from 'fastify'
import { PermissionDeniedError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { KeyScope } from './route-access.js'

export interface AuthContext {
  tenantId: string
  environmentId: string
  userId: string
  apiKeyId: string
  roles: string[]
  /** the key's scope: `read_only` keys reach read routes only (route-access.ts) */
  scope: KeyScope
  /** the tenant's own request limits (auth/request-rate-limit.ts); null: the configured default */
  rateLimits?: { perKey: number | null; perTenant: number | null }
}


declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext
  }
}

export function scopeOf(request: FastifyRequest): Scope {
  return { tenant_id: request.auth.tenantId, environment_id: request.auth.environmentId }
}

export function requireRole(request: FastifyRequest, role: string): void {
  if (!request.auth.roles.includes(role)) throw new PermissionDeniedError(`this operation requires the ${role} role`)
}
