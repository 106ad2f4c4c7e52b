// The client's view of the served OpenAPI document. Every route declares its 2xx body and the
// ErrorResponse of each error status it answers; two additions cover what a client may still
// meet: any other 4xx/5xx (a proxy, a route added without its statuses) is typed ErrorResponse
// too (platform/http.ts maps every error to it), and a success without a described body is a
// JSON object `{ [key: string]: unknown }` (PDF and CSV downloads excepted: not JSON).

type Json = Record<string, unknown>

const errorResponseSchema = {
  type: 'object',
  required: ['code', 'http_status_code', 'message'],
  properties: {
    code: {
      type: 'string',
      enum: [
        'http_client_error', 'system_error', 'internal_error', 'not_found', 'already_exists', 'version_conflict',
        'validation_error', 'invalid_operation', 'permission_denied', 'database_error', 'service_unavailable', 'too_many_requests',
      ],
    },
    http_status_code: { type: 'integer' },
    message: { type: 'string' },
  },
}

const errorResponse = {
  description: 'ErrorResponse',
  content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } },
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch']

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

function isDownload(path: string): boolean {
  return /\/(pdf|csv)$/.test(path)
}

function withResponses(path: string, responses: Json): Json {
  const out: Json = {}
  for (const [status, response] of Object.entries(responses)) {
    const undescribed = isObject(response) && response.content === undefined
    if (/^2/.test(status) && undescribed && !isDownload(path)) {
      out[status] = {
        description: 'Success (the route does not describe this body yet)',
        content: { 'application/json': { schema: { type: 'object', additionalProperties: true } } },
      }
    } else {
      out[status] = response
    }
  }
  out['4XX'] ??= errorResponse
  out['5XX'] ??= errorResponse
  return out
}

export function clientDocument(doc: Json): Json {
  const paths: Json = {}
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue
    const ops: Json = {}
    for (const [method, op] of Object.entries(item)) {
      ops[method] = METHODS.includes(method) && isObject(op) ? { ...op, responses: withResponses(path, isObject(op.responses) ? op.responses : {}) } : op
    }
    paths[path] = ops
  }
  const components = isObject(doc.components) ? doc.components : {}
  const schemas = isObject(components.schemas) ? components.schemas : {}
  return { ...doc, paths, components: { ...components, schemas: { ...schemas, ErrorResponse: schemas.ErrorResponse ?? errorResponseSchema } } }
}
