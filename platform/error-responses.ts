// The spec's ErrorResponse as one shared JSON schema, and the error statuses routes declare with
// it. createHttpServer adds the statuses its error mapping (http.ts) can give any route; an auth
// hook adds its own (declareErrorStatuses) for the routes behind it; a route declares the rest.
import type { RouteOptions } from 'fastify'
import { ERROR_CODES } from './errors.js'

export const errorResponseSchema = {
  $id: 'ErrorResponse',
  type: 'object',
  required: ['code', 'http_status_code', 'message'],
  additionalProperties: false,
  properties: {
    code: { type: 'string', enum: ERROR_CODES },
    http_status_code: { type: 'integer' },
    message: { type: 'string' },
  },
} as const

/** A response entry answering ErrorResponse. */
export const errorResponse = { description: 'ErrorResponse', $ref: 'ErrorResponse#' } as const

/** `{ 404: errorResponse, 409: errorResponse }` for a route's `response`. */
export function errorStatuses(...statuses: number[]): Record<number, typeof errorResponse> {
  return Object.fromEntries(statuses.map((s) => [s, errorResponse]))
}

type RouteSchema = { hide?: boolean; response?: Record<string, unknown> }

/** Adds ErrorResponse for `statuses` to a documented route, keeping what the route declared. */
export function declareErrorStatuses(route: Pick<RouteOptions, 'schema'>, statuses: number[]): void {
  const schema = route.schema as RouteSchema | undefined
  if (!schema || schema.hide) return
  schema.response = { ...errorStatuses(...statuses), ...schema.response }
}

const WITH_BODY = new Set(['POST', 'PUT', 'PATCH'])

/**
 * What http.ts's error mapping can answer on any route: 400 (validation, malformed JSON, a value
 * Postgres refuses), 414 (URL too long), 500, 503 (a dependency down); with a body 409 (a unique
 * key or a concurrent change), 413 (too large) and 415 (not JSON); with a path parameter 404.
 */
export function mappedErrorStatuses(route: Pick<RouteOptions, 'method' | 'url'>): number[] {
  const methods = [route.method].flat()
  const statuses = [400, 414, 500, 503]
  if (methods.some((m) => WITH_BODY.has(m))) statuses.push(409, 413, 415)
  if (methods.includes('DELETE')) statuses.push(409)
  if (route.url.includes(':')) statuses.push(404)
  return statuses
}
