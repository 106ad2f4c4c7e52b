import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, text, type BaseRecord } from '../db/common.js'

/** Links a customer (entity_id) to its record at an external provider. */
export interface CustomerIntegration extends BaseRecord {
  entity_id: string
  provider_type: string
  provider_entity_id: string
}

export const CustomerIntegrationSchema = new EntitySchema<CustomerIntegration>({
  name: 'CustomerIntegration',
  tableName: 'customer_integrations',
  properties: {
    ...baseColumns<CustomerIntegration>(),
    entity_id: text(),
    provider_type: text(),
    provider_entity_id: text(),
  },
})
