// The admin API's onRequest hook: off (404) without ADMIN_TOKEN, 401 without the right token.
// A tenant API key (x-api-key) grants nothing here.
import type { FastifyRequest } from 'fastify'
import { DomainError, PermissionDeniedError } from '../../platform/errors.js'
import { bearerToken, sameToken } from './token.js'

export function adminAuthHook(adminToken: string | undefined) {
  return async (request: FastifyRequest): Promise<void> => {
    if (!adminToken) throw new DomainError('not_found', 404, 'the admin API is disabled: set ADMIN_TOKEN to enable it')
    const given = bearerToken(request.headers.authorization)
    if (!given) throw new PermissionDeniedError('missing admin token: send Authorization: Bearer <ADMIN_TOKEN>', 401)
    if (!sameToken(given, adminToken)) throw new PermissionDeniedError('invalid admin token', 401)
  }
}
