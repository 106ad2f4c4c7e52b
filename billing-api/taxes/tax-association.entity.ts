import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, bool, integer, text, type BaseRecord } from '../db/common.js'

export const TAX_ENTITY_TYPES = ['customer', 'subscription', 'tenant'] as const
export type TaxEntityType = (typeof TAX_ENTITY_TYPES)[number]

/** Attaches a published tax rate to a customer, a subscription or the whole tenant. */
export interface TaxAssociation extends BaseRecord {
  tax_rate_id: string
  entity_type: TaxEntityType
  entity_id: string
  /** lower applies first */
  priority: number
  /** applied to invoices without being asked for */
  auto_apply: boolean
}

export const TaxAssociationSchema = new EntitySchema<TaxAssociation>({
  name: 'TaxAssociation',
  tableName: 'tax_associations',
  properties: {
    ...baseColumns<TaxAssociation>(),
    tax_rate_id: text(),
    entity_type: text(),
    entity_id: text(),
    priority: integer(),
    auto_apply: bool(),
  },
})
