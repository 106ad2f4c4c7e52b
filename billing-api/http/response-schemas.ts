// Building blocks of the response schemas. A resource's schema is registered once with its $id
// (DomainModule.schemas) and routes refer to it (`ref('Customer')`), so the OpenAPI document
// has one component per resource and fastify serializes every route's body from the same one.
// The serializer writes only the properties a schema lists: a property a serializer adds must
// be added here too (test/contract fails until it is). Open JSON (metadata, settings, tiers,
// provider payloads) is declared open on purpose: `anyJson` or `additionalProperties`.
import { errorStatuses } from '../../platform/error-responses.js'

type Schema = Record<string, unknown>

export const str = { type: 'string' } as const
export const stringOrNull = { type: ['string', 'null'] } as const
export const integer = { type: 'integer' } as const
export const integerOrNull = { type: ['integer', 'null'] } as const
export const number = { type: 'number' } as const
export const bool = { type: 'boolean' } as const
export const booleanOrNull = { type: ['boolean', 'null'] } as const
/**
 * An amount in a currency: always printed with the currency's minor-unit digits ("7.50", JPY
 * "300"; pricing/money.ts toMoneyString). The currency is the `currency` of its object or of the
 * nearest enclosing one; test/contract checks every such field of every answer against it.
 * Amounts a user defines (prices, coupon and commitment amounts, tax fixed values) keep the
 * precision they were given, and credits are not money: neither is declared so.
 */
export const money = { type: 'string', format: 'money' } as const
export const dateTimeString = { type: 'string', format: 'date-time' } as const
export const dateTimeOrNull = { type: ['string', 'null'], format: 'date-time' } as const
/** Any JSON value: a column or field whose shape the API does not fix (rules, tiers, provider data). */
export const anyJson = {} as const
/** A field always null here: a relation Meterline does not have or does not expand, written for clients that require the key. */
export const alwaysNull = { type: 'null' } as const
/** metadata: string values, as the request schemas accept them */
export const metadataResponse = { type: 'object', additionalProperties: { type: 'string' } } as const
export const stringArray = { type: 'array', items: str } as const

/** An object with these properties, all required unless listed in `optional`; closed unless `open`. */
export function objectOf(properties: Record<string, Schema>, opts: { optional?: string[]; nullable?: boolean; open?: boolean } = {}): Schema {
  const optional = new Set(opts.optional ?? [])
  return {
    type: opts.nullable ? ['object', 'null'] : 'object',
    required: Object.keys(properties).filter((k) => !optional.has(k)),
    additionalProperties: opts.open === true,
    properties,
  }
}

/** The common fields of an environment-scoped record (db/common.ts serializeBase). */
export const recordBaseProperties = {
  id: str,
  tenant_id: str,
  environment_id: str,
  status: str,
  metadata: metadataResponse,
  created_at: dateTimeString,
  updated_at: dateTimeString,
  created_by: stringOrNull,
  updated_by: stringOrNull,
} as const

/** A resource schema with its $id: the common record fields and its own. */
export function recordSchema(id: string, properties: Record<string, Schema>, opts: { optional?: string[] } = {}): Schema {
  return { $id: id, ...objectOf({ ...recordBaseProperties, ...properties }, opts) }
}

/** A reference to a registered resource schema. */
export const ref = (id: string) => ({ $ref: `${id}#` }) as const

export const paginationSchema = objectOf({ limit: integer, offset: integer, total: integer })

/** `{ items, pagination }` of a list route (http/schemas.ts listResponse). */
export function pageOf(item: Schema): Schema {
  return objectOf({ items: { type: 'array', items: item }, pagination: paginationSchema })
}

/** `{ items }` without pagination. */
export function itemsOf(item: Schema): Schema {
  return objectOf({ items: { type: 'array', items: item } })
}

/** The answer of a route that sends no body. */
export const noContent: Record<string, unknown> = { description: 'No Content', type: 'null' }

/** The answer of a delete that says what it did (`{message}`), where a client wants a body. */
export const deletedMessage: Schema = objectOf({ message: str })

/** A non-JSON download (PDF, CSV). */
export function download(contentType: string, description: string): Schema {
  return { description, content: { [contentType]: { schema: { type: 'string' } } } }
}

export { errorStatuses }
