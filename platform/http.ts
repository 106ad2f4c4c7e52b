// One HTTP server factory for every service: the spec's ErrorResponse for every
// 4xx/5xx, request metrics, /metrics and /health.
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifySchema } from 'fastify'
import { Ajv } from 'ajv'
import addFormats from 'ajv-formats'
import {
  NotFoundError as OrmNotFoundError,
  OptimisticLockError,
  UniqueConstraintViolationException,
  ForeignKeyConstraintViolationException,
} from '@mikro-orm/core'
import { DomainError, ServiceUnavailableError, type ErrorCode, type ErrorResponse } from './errors.js'
import { httpRequestSeconds, registry } from './metrics.js'

export interface HttpOptions {
  service: string
  logLevel: string
  bodyLimit?: number
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
  }
  if (err instanceof SyntaxError) return body('validation_error', 400, `malformed JSON body: ${err.message}`)
  const status = fe.statusCode ?? 500
  if (status >= 400 && status < 500) return body('http_client_error', status, fe.message)
  return body('internal_error', 500, 'internal server error')
}

function ajv(coerceTypes: false | 'array'): Ajv {
  const instance = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: false, strict: false })
  addFormats.default(instance)
  return instance
}

/**
 * JSON bodies are validated strictly (a number is never coerced into a decimal string, so
 * floats cannot sneak into money fields); query strings and path parameters arrive as text
 * and are coerced to the schema's types (`?limit=20`).
 */
function validatorCompiler() {
  const strict = ajv(false)
  const coercing = ajv('array')
  return ({ schema, httpPart }: { schema: FastifySchema; httpPart?: string }) =>
    (httpPart === 'body' ? strict : coercing).compile(schema as object)
}

export function createHttpServer(opts: HttpOptions): FastifyInstance {
  const app = Fastify({
    logger: { level: opts.logLevel },
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    // Per-request log lines would dominate ingest's CPU; latency goes to metrics instead.
    logController: new LogController({ disableRequestLogging: true }),
  })
  app.setValidatorCompiler(validatorCompiler())

  app.setErrorHandler((err, request, reply) => {
    const res = toErrorResponse(err as Error)
    if (res.http_status_code >= 500) request.log.error({ err }, 'request failed')
    if (err instanceof ServiceUnavailableError && err.retryAfterSeconds) void reply.header('retry-after', String(err.retryAfterSeconds))
    void reply.code(res.http_status_code).send(res)
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
    return registry.metrics()
  })
  app.get('/health', { schema: { hide: true } }, async () => ({ status: 'ok', service: opts.service }))
  return app
}
