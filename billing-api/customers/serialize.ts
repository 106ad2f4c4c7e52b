import { serializeBase } from '../db/common.js'
import type { CustomerIntegration } from './customer-integration.entity.js'
import type { Customer } from './customer.entity.js'

export function serializeIntegration(i: CustomerIntegration) {
  return { ...serializeBase(i), entity_id: i.entity_id, provider_type: i.provider_type, provider_entity_id: i.provider_entity_id }
}

export function serializeCustomer(c: Customer, integrations: CustomerIntegration[] = []) {
  return {
    ...serializeBase(c),
    external_id: c.external_id,
    name: c.name,
    email: c.email,
    address_line1: c.address_line1,
    address_line2: c.address_line2,
    address_city: c.address_city,
    address_state: c.address_state,
    address_postal_code: c.address_postal_code,
    address_country: c.address_country,
    integrations: integrations.map(serializeIntegration),
  }
}
