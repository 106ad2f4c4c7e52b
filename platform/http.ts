// One HTTP server factory for every service: the spec's ErrorResponse for every
// 4xx/5xx, request metrics, /metrics and /health.
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifySchema } from 'fastify'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import {
  NotFoundError as OrmNotFoundError,
  OptimisticLockError,
  UniqueConstraintViolationException,
  ForeignKeyConstraintViolationException,
} from '@mikro-orm/core'
import type { Socket } from 'node:net'
import { DomainError, ServiceUnavailableError, TooManyRequestsError, type ErrorCode, type ErrorResponse } from './errors.js'
import { assertStorableText } from './input-guard.js'
import { withIntegerBounds } from './schema-bounds.js'
import { dependencyUnavailable, httpRequestSeconds, metricsText, registry } from './metrics.js'
import { errorChain, unavailableDependency } from './unavailable.js'
import { declareErrorStatuses, errorResponseSchema, mappedErrorStatuses } from './error-responses.js'
import { buildLenientSerializer } from './lenient-serializer.js'
import { validatorOnFirstUse } from './compile-on-first-use.js'

export interface HttpOptions {
  service: string
  logLevel: string
  bodyLimit?: number
  /** request line's URL, longer: 414 (HTTP_MAX_URL_BYTES) */
  maxUrlBytes?: number
  /** request line and headers together, larger: 431 (HTTP_MAX_HEADER_BYTES) */
  maxHeaderBytes?: number
  /** whose address request.ip is (HTTP_TRUST_PROXY): the abuse limits count per address */
  trustProxy?: boolean | string | ((address: string, hop: number) => boolean)
}

export interface RegisteredRoute {
  method: string
  url: string
  config: { access?: 'read' } | undefined
}

const registeredRoutes = new WeakMap<FastifyInstance, RegisteredRoute[]>()

/** Every route of a server made by createHttpServer, as registered (tests enumerate them). */
export function routesOf(app: FastifyInstance): RegisteredRoute[] {
  return registeredRoutes.get(app) ?? []
}

function body(code: ErrorCode, status: number, message: string): ErrorResponse {
  return { code, http_status_code: status, message }
}

/** `/events/3/timestamp` -> `events[3].timestamp`, so a bulk error names the index. */
export function jsonPointerToPath(pointer: string): string {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((seg, i) => (/^\d+$/.test(seg) ? `[${seg}]` : i === 0 ? seg : `.${seg}`))
    .join('')
}

function validationMessage(err: FastifyError): string {
  const first = err.validation?.[0]
  if (!first) return err.message
  const where = err.validationContext ?? 'body'
  const params = first.params
  let path = jsonPointerToPath(first.instancePath ?? '')
  const missing = params?.missingProperty as string | undefined
  const extra = params?.additionalProperty as string | undefined
  if (first.keyword === 'required' && missing) {
    path = path ? `${path}.${missing}` : missing
  } else if (first.keyword === 'additionalProperties' && extra) {
    path = path ? `${path}.${extra}` : extra
  }
  return `${where}${path ? `.${path}` : ''} ${first.message ?? 'is invalid'}`.replace(/^body\./, '')
}

export function toErrorResponse(err: FastifyError | Error): ErrorResponse {
  if (err instanceof DomainError) return err.toResponse()
  if (err instanceof UniqueConstraintViolationException) return body('already_exists', 409, 'a record with the same unique key already exists')
  if (err instanceof OptimisticLockError) return body('version_conflict', 409, 'the record was changed by another request; reload and retry')
  if (err instanceof ForeignKeyConstraintViolationException) return body('validation_error', 400, 'a referenced record does not exist')
  if (err instanceof OrmNotFoundError) return body('not_found', 404, err.message)
  const fe = err as FastifyError
  if (fe.validation) return body('validation_error', 400, validationMessage(fe))
  switch (fe.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return body('validation_error', 400, `malformed JSON body: ${fe.message}`)
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return body('validation_error', 413, 'request body is too large')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return body('validation_error', 415, 'unsupported content type; send application/json')
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return body('validation_error', 414, 'a path parameter is too long')
    case 'FST_ERR_BAD_URL':
      return body('validation_error', 400, 'the URL is not valid (bad percent-encoding)')
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return body('validation_error', 400, 'the content-length header does not match the body')
  }
  if (err instanceof SyntaxError) return body('validation_error', 400, `malformed JSON body: ${err.message}`)
  const data = postgresDataException(err)
  if (data) return body('validation_error', 400, data)
  const down = unavailableDependency(err)
  if (down) return body('service_unavailable', 503, `${down === 'postgres' ? 'the database' : 'the job queue (Redis)'} is unavailable; retry later`)
  const status = fe.statusCode ?? 500
  if (status >= 400 && status < 500) return body('http_client_error', status, fe.message)
  return body('internal_error', 500, 'internal server error')
}

/**
 * Postgres SQLSTATE class 22 (data exception: a number out of range, an invalid date, a string
 * too long) is caused by a value the request sent that the schema let through: a 400, and the
 * statement's transaction wrote nothing.
 */
function postgresDataException(err: Error): string | undefined {
  for (const e of errorChain(err).slice(0, 4)) {
    if (typeof e.code === 'string' && /^22[0-9A-Z]{3}$/.test(e.code) && typeof e.severity === 'string') {
      return `a value cannot be stored: ${typeof e.message === 'string' ? e.message.split(' - ').pop() : ''}`
    }
  }
  return undefined
}

function ajv(coerceTypes: false | 'array'): Ajv {
  const instance = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: false, strict: false })
  addFormats.default(instance)
  return instance
}

/**
 * JSON bodies are validated strictly (a number is never coerced into a decimal string, so
 * floats cannot sneak into money fields); query strings and path parameters arrive as text
 * and are coerced to the schema's types (`?limit=20`). Each validator is compiled on its
 * route's first request (compile-on-first-use.ts).
 */
function validatorCompiler() {
  let instances: { strict: Ajv; coercing: Ajv } | undefined
  return ({ schema, httpPart }: { schema: FastifySchema; httpPart?: string }) =>
    validatorOnFirstUse(() => {
      instances ??= { strict: ajv(false), coercing: ajv('array') }
      return (httpPart === 'body' ? instances.strict : instances.coercing).compile(withIntegerBounds(schema as object))
    })
}

/**
 * Errors node's HTTP parser answers before fastify sees a request (headers too large, a
 * malformed request line, a client timeout), in the ErrorResponse shape too.
 */
function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return
  const [status, reason, res] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', body('validation_error', 431, 'the request line and headers are too large')]
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', body('http_client_error', 408, 'the request was not received in time')]
        : [400, 'Bad Request', body('http_client_error', 400, 'malformed HTTP request')]
  const text = JSON.stringify(res)
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(text)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${text}`)
  }
  socket.destroy(err)
}

export function createHttpServer(opts: HttpOptions): FastifyInstance {
  const maxUrlBytes = opts.maxUrlBytes ?? 8 * 1024
  const app = Fastify({
    logger: { level: opts.logLevel },
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    trustProxy: opts.trustProxy ?? false,
    http: { maxHeaderSize: opts.maxHeaderBytes ?? 16 * 1024 },
    clientErrorHandler,
    // Bad percent-encoding and over-long path parameters are answered before the error handler.
    frameworkErrors: (err, request, reply) => sendError(err, request, reply),
    // Per-request log lines would dominate ingest's CPU; latency goes to metrics instead.
    logController: new LogController({ disableRequestLogging: true }),
    schemaController: { compilersFactory: { buildSerializer: buildLenientSerializer } },
  })
  app.setValidatorCompiler(validatorCompiler())
  // A JSON content type with an empty body is a request without a body, for any method (clients
  // such as Flexprice's SDK send the header on a DELETE with nothing after it); a route that
  // requires a body still refuses it through its schema. Any other body is parsed as before.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    const json = text.toString()
    if (json === '') done(null, undefined)
    else void parseJson(request, json, done)
  })
  const routes: RegisteredRoute[] = []
  registeredRoutes.set(app, routes)
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url, config: r.config as RegisteredRoute['config'] })
  })
  // Every documented route declares the ErrorResponse of the errors sendError can answer it.
  app.addSchema(errorResponseSchema)
  app.addHook('onRoute', (route) => declareErrorStatuses(route, mappedErrorStatuses(route)))

  function sendError(err: Error, request: FastifyRequest, reply: FastifyReply) {
    const res = toErrorResponse(err)
    if (res.code === 'service_unavailable') {
      const down = unavailableDependency(err)
      if (down) dependencyUnavailable.inc({ dependency: down })
      request.log.warn({ err: err.message, url: request.url.split('?')[0] }, 'dependency unavailable')
    } else if (res.http_status_code >= 500) request.log.error({ err }, 'request failed')
    if ((err instanceof ServiceUnavailableError || err instanceof TooManyRequestsError) && err.retryAfterSeconds) void reply.header('retry-after', String(err.retryAfterSeconds))
    void reply.code(res.http_status_code).send(res)
  }
  app.setErrorHandler((err, request, reply) => sendError(err as Error, request, reply))

  // Every route: an over-long URL is 414, and no string of the request may be unstorable text.
  app.addHook('onRequest', async (request) => {
    if (Buffer.byteLength(request.url) > maxUrlBytes) throw new DomainError('validation_error', 414, `the URL is longer than ${maxUrlBytes} bytes`)
  })
  app.addHook('preValidation', async (request) => {
    assertStorableText([
      { name: 'path', value: request.params },
      { name: 'query', value: request.query },
      { name: 'body', value: request.body },
    ])
  })

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(body('not_found', 404, `route ${request.method} ${request.url.split('?')[0]} not found`))
  })

  app.addHook('onResponse', async (request, reply) => {
    httpRequestSeconds.observe(
      {
        service: opts.service,
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status_code: String(reply.statusCode),
      },
      reply.elapsedTime / 1000,
    )
  })

  app.get('/metrics', { schema: { hide: true } }, async (_req, reply) => {
    void reply.header('content-type', registry.contentType)
    return metricsText()
  })
  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok', service: opts.service }))
  return app
}
