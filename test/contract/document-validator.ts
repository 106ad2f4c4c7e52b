// Validators for the answers the served OpenAPI document declares, one per operation and status.
// Strict where the document is silent: an object schema that lists its properties and does not
// say `additionalProperties` is validated as closed, so a property the route sends that the
// document does not describe fails (fastify's serializer would have dropped it silently).
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'

type Json = Record<string, unknown>
type Responses = Record<string, { content?: Record<string, { schema?: unknown }> }>
export type OpenApiDoc = { paths: Record<string, Record<string, { responses: Responses }>>; components?: Json }

export const METHODS = ['get', 'put', 'post', 'delete', 'patch']

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v)

export function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed)
  if (!isObject(schema)) return schema
  const out: Json = {}
  for (const [k, v] of Object.entries(schema)) {
    // keyword maps: their keys are names, not schemas
    out[k] = k === 'properties' || k === 'patternProperties' || k === 'schemas'
      ? Object.fromEntries(Object.entries(v as Json).map(([name, s]) => [name, closed(s)]))
      : k === 'enum' || k === 'const' || k === 'required' || k === 'example' || k === 'default' ? v : closed(v)
  }
  if (isObject(out.properties) && out.additionalProperties === undefined) out.additionalProperties = false
  return out
}

export class DocumentValidator {
  private readonly ajv: Ajv
  private readonly cache = new Map<string, ValidateFunction>()

  constructor(readonly doc: OpenApiDoc) {
    this.ajv = new Ajv({ strict: false, allErrors: true })
    addFormats.default(this.ajv)
    this.ajv.addSchema({ components: closed(doc.components ?? {}) }, 'doc')
  }

  operations(): string[] {
    const ops: string[] = []
    for (const [path, item] of Object.entries(this.doc.paths)) {
      for (const method of Object.keys(item)) if (METHODS.includes(method)) ops.push(`${method.toUpperCase()} ${path}`)
    }
    return ops.sort()
  }

  /** The declared response of an operation for a status, if any. */
  response(method: string, path: string, status: number) {
    return this.doc.paths[path]?.[method.toLowerCase()]?.responses?.[String(status)]
  }

  /** Errors of `body` against the JSON schema declared for this answer ([] when it conforms). */
  validate(method: string, path: string, status: number, body: unknown): string[] {
    const key = `${method} ${path} ${status}`
    let fn = this.cache.get(key)
    if (!fn) {
      const schema = this.response(method, path, status)?.content?.['application/json']?.schema
      if (schema === undefined) return ['no JSON schema declared for this answer']
      const rooted = JSON.parse(JSON.stringify(closed(schema)).replaceAll('"#/components/', '"doc#/components/'))
      fn = this.ajv.compile(rooted as object)
      this.cache.set(key, fn)
    }
    return fn(body) ? [] : (fn.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`)
  }
}
