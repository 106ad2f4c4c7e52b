// Response schemas of the customer routes (registered by module.ts, referred to by $id).
import { alwaysNull, recordSchema, ref, str, stringOrNull } from '../http/response-schemas.js'

/** A customer's link to its record at a provider (spec: Customer.integrations). */
export const customerIntegrationSchema = recordSchema('CustomerIntegration', {
  entity_id: str,
  provider_type: str,
  provider_entity_id: str,
})

export const customerSchema = recordSchema('Customer', {
  external_id: str,
  name: stringOrNull,
  email: stringOrNull,
  address_line1: stringOrNull,
  address_line2: stringOrNull,
  address_city: stringOrNull,
  address_state: stringOrNull,
  address_postal_code: stringOrNull,
  address_country: stringOrNull,
  integrations: { type: 'array', items: ref('CustomerIntegration') },
  // customers form no hierarchy here (subscriptions do): null for clients that require the keys
  parent_customer_id: alwaysNull,
  parent_customer: alwaysNull,
})
