// Response bodies are serialized from the route schemas (fast-json-stringify), except that
// `required` is not enforced there: fast-json-stringify throws on a required property that is
// undefined, which would turn one missing field into a 500 for a request that succeeded. The
// OpenAPI document keeps `required`, and test/contract checks each route's own body against it.
import fastJson from 'fast-json-stringify'
import { serializerOnFirstUse } from './compile-on-first-use.js'

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The schema without its `required` lists (property names, including one called "required", stay). */
export function withoutRequired(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutRequired)
  if (!isObject(schema)) return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'required' && Array.isArray(v)) continue
    out[k] = k === 'properties' && isObject(v) ? Object.fromEntries(Object.entries(v).map(([name, s]) => [name, withoutRequired(s)])) : withoutRequired(v)
  }
  return out
}

/**
 * Fastify's `schemaController.compilersFactory.buildSerializer`: called per plugin context with
 * the schemas added to it (app.addSchema), which the route schemas' $refs resolve to. Each
 * serializer is compiled on its first answer (compile-on-first-use.ts).
 */
export function buildLenientSerializer(externalSchemas?: unknown): (route: { schema?: unknown }) => (data: unknown) => string {
  let shared: Record<string, fastJson.Schema> | undefined
  return ({ schema }) => serializerOnFirstUse(() => {
    shared ??= withoutRequired(externalSchemas ?? {}) as Record<string, fastJson.Schema>
    return fastJson(withoutRequired(schema) as fastJson.Schema, { schema: shared })
  })
}
