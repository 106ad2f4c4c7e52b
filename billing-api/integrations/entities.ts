import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, json, text, type BaseRecord } from '../db/common.js'
import type { MappedEntityType } from '../queues.js'

export interface ConnectionSettings {
  /** generic_http only: where pushes are sent */
  base_url?: string
  /** spec: "rate limits set under an integration_events setting" */
  integration_events?: { rate_limit_per_second?: number }
}

/** A provider account of one environment. Credentials are only ever stored encrypted. */
export interface IntegrationConnection extends BaseRecord {
  provider: string
  name: string
  credentials_encrypted: string
  credentials_hint: Record<string, string>
  settings: ConnectionSettings
}

export const IntegrationConnectionSchema = new EntitySchema<IntegrationConnection>({
  name: 'IntegrationConnection',
  tableName: 'integration_connections',
  properties: {
    ...baseColumns<IntegrationConnection>(),
    provider: text(),
    name: text(),
    credentials_encrypted: text(),
    credentials_hint: json(),
    settings: json(),
  },
})



/** A local entity's record at a provider (spec: CustomerIntegration, for any entity type). */
export interface EntityIntegrationMapping extends BaseRecord {
  entity_type: MappedEntityType
  entity_id: string
  provider_type: string
  provider_entity_id: string
}

export const EntityIntegrationMappingSchema = new EntitySchema<EntityIntegrationMapping>({
  name: 'EntityIntegrationMapping',
  tableName: 'entity_integration_mappings',
  properties: {
    ...baseColumns<EntityIntegrationMapping>(),
    entity_type: text(),
    entity_id: text(),
    provider_type: text(),
    provider_entity_id: text(),
  },
})

/** payment.succeeded: how to charge this customer automatically later. */
export interface PaymentMember extends BaseRecord {
  customer_id: string
  provider: string
  provider_customer_id: string
  payment_method_id: string | null
  last_payment_id: string | null
}

export const PaymentMemberSchema = new EntitySchema<PaymentMember>({
  name: 'IntegrationPaymentMember',
  tableName: 'integration_payment_members',
  properties: {
    ...baseColumns<PaymentMember>(),
    customer_id: text(),
    provider: text(),
    provider_customer_id: text(),
    payment_method_id: text(true),
    last_payment_id: text(true),
  },
})
