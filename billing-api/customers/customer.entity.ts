import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, text, type BaseRecord } from '../db/common.js'

export interface Customer extends BaseRecord {
  external_id: string
  name: string | null
  email: string | null
  address_line1: string | null
  address_line2: string | null
  address_city: string | null
  address_state: string | null
  address_postal_code: string | null
  address_country: string | null
}

export const CustomerSchema = new EntitySchema<Customer>({
  name: 'Customer',
  tableName: 'customers',
  properties: {
    ...baseColumns<Customer>(),
    external_id: text(),
    name: text(true),
    email: text(true),
    address_line1: text(true),
    address_line2: text(true),
    address_city: text(true),
    address_state: text(true),
    address_postal_code: text(true),
    address_country: text(true),
  },
})
