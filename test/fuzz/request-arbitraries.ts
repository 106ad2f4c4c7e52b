// fast-check arbitraries for HTTP requests built from the OpenAPI document: every operation's
// path parameters, query and JSON body, mostly shaped by the route's schema (so requests get
// past validation and reach the handlers) with hostile values mixed in at every leaf.
import fc from 'fast-check'

export interface Operation {
  method: string
  /** OpenAPI path template: /v1/meters/{id} */
  path: string
  pathParams: string[]
  query: Record<string, any>
  body?: any
}

export interface FuzzRequest {
  op: Operation
  /** the URL path and query, percent-encoded as sent */
  url: string
  /** a JSON body, or raw text (malformed JSON) */
  body?: { json: unknown } | { text: string }
}

/** Values the platform has answered 500 to, or stored wrongly, before (issue #13), and friends. */
export const HOSTILE_STRINGS = [
  '\u0000', 'a\u0000b', '\ud800', 'x\udc00', '\udbff\udfff', '😀', '', ' ', 'x'.repeat(5000),
  '1.0000000000000000001', '99999999999999999999999999999', '-0', 'NaN', '1e400', '../../etc/passwd', '%00', "'; DROP TABLE x; --",
  '0001-01-01T00:00:00Z', '1899-12-31T23:59:59Z', '2300-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-02-30T00:00:00Z',
]
const HOSTILE_NUMBERS = [-1, 0, 1.5, 2 ** 31, 2 ** 53 + 2, 1e20, 1e308, -1e308, 0.30000000000000004, 1e-7]
/** Path segments sent as they are (already percent-encoded): NUL, a lone surrogate in CESU-8, broken escapes. */
const HOSTILE_SEGMENTS = ['%00', 'a%00b', '%ED%A0%80', '%E0%A4%A', '%', '%25', 'a%2Fb', '..', 'x'.repeat(150)]

const hostileLeaf: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(...HOSTILE_STRINGS),
  fc.constantFrom(...HOSTILE_NUMBERS),
  fc.constantFrom(null, true, [], {}),
  fc.string({ unit: 'binary', maxLength: 20 }),
)

const DECIMALS = ['0', '1', '10.5', '0.000000000001', '-3', '99999999999999999999.999999999999', '1.0000000000000000001']

function stringFor(schema: any): fc.Arbitrary<string> {
  if (schema.format === 'date-time') {
    return fc.oneof(
      fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2030-01-01T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
      fc.constantFrom('0001-01-01T00:00:00Z', '1899-12-31T23:59:59Z', '2300-01-01T00:00:00Z', '9999-12-31T23:59:59Z', '2026-11-25T00:00:00+14:00'),
    )
  }
  if (schema.format === 'date') return fc.constantFrom('2026-01-01', '0001-01-01', '9999-12-31', '2026-02-29')
  if (typeof schema.pattern === 'string' && /\[0-9\]|\\d/.test(schema.pattern)) return fc.constantFrom(...DECIMALS)
  if (schema.pattern === '^[A-Z]{3}$' || /currency/i.test(schema.description ?? '')) return fc.constantFrom('USD', 'EUR', 'JPY', 'KWD', 'XXX')
  const max = Math.min(schema.maxLength ?? 40, 40)
  return fc.string({ minLength: Math.min(schema.minLength ?? 0, max), maxLength: max })
}

function integerFor(schema: any): fc.Arbitrary<number> {
  const min = schema.minimum ?? -1000
  const max = schema.maximum ?? 1_000_000
  return fc.oneof(fc.integer({ min: Math.max(min, -1e6), max: Math.min(max, 1e6) }), fc.constantFrom(min, max, min - 1, max + 1, 2 ** 53 + 2, 1e20))
}

/** A value for `schema`, with a hostile leaf one time in `1 + hostility`. */
export function valueFor(schema: any, depth = 0, hostility = 6): fc.Arbitrary<unknown> {
  const shaped = shapedValue(schema ?? {}, depth, hostility)
  return fc.oneof({ weight: hostility, arbitrary: shaped }, { weight: 1, arbitrary: hostileLeaf })
}

function shapedValue(schema: any, depth: number, hostility: number): fc.Arbitrary<unknown> {
  if (depth > 5) return fc.constant(null)
  if (Array.isArray(schema.enum) && schema.enum.length) return fc.constantFrom(...schema.enum)
  if ('const' in schema) return fc.constant(schema.const)
  const alternatives = schema.oneOf ?? schema.anyOf
  if (Array.isArray(alternatives) && alternatives.length) return fc.oneof(...alternatives.map((s: any) => shapedValue({ ...schema, oneOf: undefined, anyOf: undefined, ...s }, depth + 1, hostility)))
  if (Array.isArray(schema.allOf) && schema.allOf.length) return shapedValue(Object.assign({}, ...schema.allOf), depth + 1, hostility)
  const type = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : schema.properties ? ['object'] : ['string', 'integer', 'object']
  return fc.oneof(...type.map((t: string) => valueOfType(t, schema, depth, hostility)))
}

function valueOfType(type: string, schema: any, depth: number, hostility: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return stringFor(schema)
    case 'integer':
      return integerFor(schema)
    case 'number':
      return fc.oneof(integerFor(schema), fc.double({ noNaN: true, noDefaultInfinity: true }))
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      return fc.array(valueFor(schema.items ?? {}, depth + 1, hostility), { maxLength: Math.min(schema.maxItems ?? 3, 3) })
    case 'object': {
      const props: Record<string, any> = schema.properties ?? {}
      const required = new Set<string>(schema.required ?? [])
      const keys = Object.keys(props)
      if (keys.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), valueFor({}, depth + 1, hostility), { maxKeys: 3 })
      const record: Record<string, fc.Arbitrary<unknown>> = {}
      for (const k of keys) record[k] = valueFor(props[k], depth + 1, hostility)
      return fc.record(record, { requiredKeys: keys.filter((k) => required.has(k)) })
    }
    default:
      return fc.constant(null)
  }
}

function encodeSegment(value: string): string {
  try {
    return encodeURIComponent(value)
  } catch {
    return '%ED%A0%80' // a lone surrogate has no UTF-8: send its CESU-8 bytes, as a broken client would
  }
}

function encodeQueryValue(value: unknown): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value) ?? ''
  return encodeSegment(text)
}

/** A request for `op`; `ids` are real record ids of the fuzzed tenant, so some requests find records. */
export function requestFor(op: Operation, ids: string[]): fc.Arbitrary<FuzzRequest> {
  const segment = fc.oneof(
    { weight: 5, arbitrary: fc.constantFrom(...ids).map(encodeSegment) },
    { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_SEGMENTS) },
    { weight: 2, arbitrary: fc.oneof(fc.constantFrom(...HOSTILE_STRINGS), fc.string({ maxLength: 30 })).filter((s) => s !== '').map(encodeSegment) },
  )
  const params = fc.tuple(...op.pathParams.map(() => segment))
  const queryEntries = Object.entries(op.query)
  const query = fc.record(Object.fromEntries(queryEntries.map(([k, s]) => [k, valueFor(s, 1, 4)])), { requiredKeys: [] })
  const body: fc.Arbitrary<FuzzRequest['body']> = op.body
    ? fc.oneof(
        { weight: 4, arbitrary: valueFor(op.body, 0, 40).map((json) => ({ json })) },
        { weight: 4, arbitrary: valueFor(op.body, 0, 6).map((json) => ({ json })) },
        { weight: 1, arbitrary: fc.constantFrom('{"a":', '[1,2', '{"a":"\\u0000"}', '{"a":"\\ud800"}', '"x"', 'null', '1e999').map((text) => ({ text })) },
      )
    : fc.constant(undefined)
  return fc.tuple(params, query, body).map(([values, q, b]) => {
    let i = 0
    const path = op.path.replace(/\{[^}]+\}/g, () => values[i++])
    const qs = Object.entries(q)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeQueryValue(v)}`)
      .join('&')
    return { op, url: qs ? `${path}?${qs}` : path, body: b }
  })
}

/** The operations of an OpenAPI document, with their parameter and body schemas. */
export function operationsOf(doc: any): Operation[] {
  const ops: Operation[] = []
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, def] of Object.entries<any>(methods)) {
      const params: any[] = def.parameters ?? []
      ops.push({
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]),
        query: Object.fromEntries(params.filter((p) => p.in === 'query').map((p) => [p.name, p.schema ?? {}])),
        body: def.requestBody?.content?.['application/json']?.schema ?? (def.requestBody ? {} : undefined),
      })
    }
  }
  return ops
}
