// Which routes a read-only API key may call, decided in one place from route metadata: every
// GET/HEAD is a read; any other method is a write unless its route says `config: READS`
// (a POST that only reads: searches, usage queries, entitlement checks, previews). A new write
// route is refused to read-only keys without anyone remembering to add a check.
import type { FastifyRequest } from 'fastify'
import { PermissionDeniedError } from '../../platform/errors.js'

export type KeyScope = 'full' | 'read_only'
export const KEY_SCOPES: readonly KeyScope[] = ['full', 'read_only']

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'read': a non-GET route that changes nothing, open to read-only keys */
    access?: 'read'
  }
}

/** Route config of a POST that changes nothing: `app.post(path, { config: READS, schema }, ...)`. */
export const READS = { access: 'read' } as const

const READ_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

export function isWriteRoute(method: string, config: { access?: 'read' } | undefined): boolean {
  return !READ_METHODS.has(method.toUpperCase()) && config?.access !== 'read'
}

/** Called by authentication once the key is known: a read-only key may not reach a write route. */
export function assertScopeAllows(request: FastifyRequest, scope: KeyScope): void {
  if (scope === 'read_only' && isWriteRoute(request.method, request.routeOptions.config)) {
    throw new PermissionDeniedError('this API key is read-only: it cannot change anything', 403)
  }
}
