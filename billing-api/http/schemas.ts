// JSON-schema fragments shared by route definitions.
export const metadataSchema = {
  type: 'object',
  additionalProperties: { type: 'string', maxLength: 1000 },
  maxProperties: 50,
} as const

export const idParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1, maxLength: 100 } },
} as const

/** Decimal amounts travel as strings; this pattern keeps floats out at the edge. */
export const decimalString = { type: 'string', pattern: '^-?[0-9]{1,20}(\\.[0-9]{1,12})?$' } as const
export const nonNegativeDecimalString = { type: 'string', pattern: '^[0-9]{1,20}(\\.[0-9]{1,12})?$' } as const

export const dateTime = { type: 'string', format: 'date-time' } as const

export const DEFAULT_LIMIT = 50

export const paginationQuery = {
  limit: { type: 'integer', minimum: 1, maximum: 1000, default: DEFAULT_LIMIT },
  offset: { type: 'integer', minimum: 0, maximum: 2_147_483_647, default: 0 },
} as const

export interface Page {
  limit: number
  offset: number
}

export function listResponse<T>(items: T[], total: number, page: Page) {
  return { items, pagination: { limit: page.limit, offset: page.offset, total } }
}

/** A search filter on any of these ids. */
export const idListSchema = { type: 'array', maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 100 } } as const

/** POST /<resource>/bulk: `items`, each a create body, made all together or not at all. */
export function bulkBodyOf<const T extends object>(item: T) {
  return { type: 'object', required: ['items'], additionalProperties: false, properties: { items: { type: 'array', minItems: 1, maxItems: 100, items: item } } } as const
}

/** spec: Limits (Address): a customer's address and a tenant's billing address */
export const addressProperties = {
  address_line1: { type: 'string', maxLength: 255 },
  address_line2: { type: 'string', maxLength: 255 },
  address_city: { type: 'string', maxLength: 100 },
  address_state: { type: 'string', maxLength: 100 },
  address_postal_code: { type: 'string', maxLength: 20 },
  address_country: { type: 'string', maxLength: 100 },
} as const
