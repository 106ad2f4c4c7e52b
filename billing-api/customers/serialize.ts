import { serializeBase, pick } from '../db/common.js'
import type { CustomerIntegration } from './customer-integration.entity.js'
import type { Customer } from './customer.entity.js'

export function serializeIntegration(i: CustomerIntegration) {
  return { ...serializeBase(i), entity_id: i.entity_id, provider_type: i.provider_type, provider_entity_id: i.provider_entity_id }
}

export function serializeCustomer(c: Customer, integrations: CustomerIntegration[] = []) {
  return {
    ...serializeBase(c),
    ...pick(c, ['external_id', 'name', 'email', 'address_line1', 'address_line2', 'address_city', 'address_state', 'address_postal_code', 'address_country']),
    integrations: integrations.map(serializeIntegration),
    parent_customer_id: null,
    parent_customer: null,
  }
}
