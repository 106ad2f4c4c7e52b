// JSON-schema fragments shared by the catalog routes (features, groups, add-ons, entitlements).

/** Names must contain something other than whitespace. */
export const nameSchema = { type: 'string', minLength: 1, maxLength: 255, pattern: '\\S' } as const

export const lookupKeySchema = { type: 'string', minLength: 1, maxLength: 255, pattern: '^\\S+$' } as const

export const descriptionSchema = { type: 'string', maxLength: 2000 } as const

/** Path-style ids named in a body or a query. */
export const refIdSchema = { type: 'string', minLength: 1, maxLength: 100 } as const

/** The same schema, also accepting null (PUT uses null to clear a field). */
export function nullable<const T extends { type: string }>(s: T) {
  return { ...s, type: [s.type, 'null'] as const }
}

/** Path parameters of GET /<resource>/lookup/{lookup_key}. */
export const lookupKeyParams = {
  type: 'object',
  required: ['lookup_key'],
  properties: { lookup_key: { type: 'string', minLength: 1, maxLength: 255 } },
} as const
