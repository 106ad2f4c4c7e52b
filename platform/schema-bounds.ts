// Integers without explicit bounds in a route schema are 32-bit (Postgres `integer`): a larger
// value would pass validation and then fail in the database (a 500 before this). A schema that
// needs more says so (`maximum: Number.MAX_SAFE_INTEGER` for a bigint column).
export const INT32_MIN = -2_147_483_648
export const INT32_MAX = 2_147_483_647

function isIntegerSchema(schema: Record<string, unknown>): boolean {
  const t = schema.type
  return t === 'integer' || (Array.isArray(t) && t.includes('integer'))
}

/** A copy of `schema` where every integer has a minimum and a maximum (default: int32). */
export function withIntegerBounds<T>(schema: T): T {
  if (Array.isArray(schema)) return (schema as unknown[]).map((s) => withIntegerBounds(s)) as T
  if (schema === null || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    // `enum`, `const`, `default` and `examples` hold data, not schemas.
    out[k] = k === 'enum' || k === 'const' || k === 'default' || k === 'examples' ? v : withIntegerBounds(v)
  }
  if (isIntegerSchema(out)) {
    if (out.maximum === undefined && out.exclusiveMaximum === undefined) out.maximum = INT32_MAX
    if (out.minimum === undefined && out.exclusiveMinimum === undefined) out.minimum = INT32_MIN
  }
  return out as T
}
