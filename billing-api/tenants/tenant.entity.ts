import { EntitySchema, OptionalProps } from '@mikro-orm/core'
import { tenantWideColumns, json, text, timestamp, type BaseRecord, type Metadata } from '../db/common.js'

export interface Address {
  address_line1?: string | null
  address_line2?: string | null
  address_city?: string | null
  address_state?: string | null
  address_postal_code?: string | null
  address_country?: string | null
}

export interface TenantBillingDetails {
  address?: Address
  email?: string
  help_email?: string
  phone?: string
}

export interface Tenant {
  [OptionalProps]?: 'created_at' | 'updated_at'
  id: string
  name: string
  status: string
  billing_details: TenantBillingDetails
  metadata: Metadata
  created_at: Date
  updated_at: Date
}

export const TenantSchema = new EntitySchema<Tenant>({
  name: 'Tenant',
  tableName: 'tenants',
  properties: {
    id: { type: 'string', primary: true, columnType: 'text' },
    name: text(),
    status: text(),
    billing_details: json(),
    metadata: json(),
    created_at: { ...timestamp(), onCreate: () => new Date() },
    updated_at: { ...timestamp(), onCreate: () => new Date(), onUpdate: () => new Date() },
  },
})

export interface Environment extends Omit<BaseRecord, 'environment_id'> {
  name: string
  type: 'production' | 'development'
}

export const EnvironmentSchema = new EntitySchema<Environment>({
  name: 'Environment',
  tableName: 'environments',
  properties: { ...tenantWideColumns<Environment>(), name: text(), type: text() },
})
