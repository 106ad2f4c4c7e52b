// Validators for the answers the served OpenAPI document declares, one per operation and status.
// Strict where the document is silent: an object schema that lists its properties and does not
// say `additionalProperties` is validated as closed, so a property the route sends that the
// document does not describe fails (fastify's serializer would have dropped it silently).
import { Ajv, type ValidateFunction } from 'ajv'
import addFormats from 'ajv-formats'
import { currencyPrecision } from '../../billing-api/pricing/index.js'

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
    // checked with its currency by moneyErrors (a format cannot see the object's currency)
    this.ajv.addFormat('money', /^-?\d+(\.\d+)?$/)
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

  /**
   * Money fields (`format: money`) of `body` that do not carry their currency's minor-unit digits,
   * the currency being the `currency` of the field's object or of the nearest enclosing one.
   */
  moneyErrors(method: string, path: string, status: number, body: unknown): string[] {
    const schema = this.response(method, path, status)?.content?.['application/json']?.schema
    const errors: string[] = []
    this.walkMoney(schema, body, null, '', errors, 0)
    return errors
  }

  private resolve(schema: unknown): Json | undefined {
    let s = schema
    for (let i = 0; i < 10 && isObject(s) && typeof s.$ref === 'string'; i++) {
      s = (s.$ref as string).replace(/^#\//, '').split('/').reduce<unknown>((o, k) => (isObject(o) ? o[k] : undefined), this.doc)
    }
    return isObject(s) ? s : undefined
  }

  private walkMoney(schemaIn: unknown, value: unknown, currency: string | null, at: string, errors: string[], depth: number): void {
    const schema = this.resolve(schemaIn)
    if (!schema || depth > 40) return
    for (const k of ['anyOf', 'oneOf', 'allOf']) {
      if (Array.isArray(schema[k])) for (const branch of schema[k] as unknown[]) this.walkMoney(branch, value, currency, at, errors, depth + 1)
    }
    if (schema.format === 'money' && typeof value === 'string') {
      if (currency === null) errors.push(`${at || '/'}: a money field with no currency in its object or around it`)
      else {
        const digits = value.split('.')[1]?.length ?? 0
        if (digits !== currencyPrecision(currency)) errors.push(`${at || '/'}: ${JSON.stringify(value)} is not written with the ${currencyPrecision(currency)} minor-unit digits of ${currency}`)
      }
    }
    if (Array.isArray(value) && schema.items !== undefined) value.forEach((v, i) => this.walkMoney(schema.items, v, currency, `${at}/${i}`, errors, depth + 1))
    if (isObject(value) && isObject(schema.properties)) {
      const own = typeof value.currency === 'string' && /^[A-Za-z]{3}$/.test(value.currency) ? value.currency : currency
      for (const [k, s] of Object.entries(schema.properties)) if (k in value) this.walkMoney(s, value[k], own, `${at}/${k}`, errors, depth + 1)
    }
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
