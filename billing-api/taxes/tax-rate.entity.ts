import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, text, type BaseRecord } from '../db/common.js'

/** Only published rates can be attached; archived ones stay readable; deleted ones are gone and free their code. */
export const TAX_RATE_STATUSES = ['published', 'archived', 'deleted'] as const
export type TaxRateStatus = (typeof TAX_RATE_STATUSES)[number]

export interface TaxRate extends BaseRecord {
  status: TaxRateStatus
  name: string
  /** unique per environment among rates that are not deleted */
  code: string
  description: string | null
  /** exactly one of percentage_value (0..100) and fixed_value is set */
  percentage_value: string | null
  fixed_value: string | null
  /** set exactly when fixed_value is */
  currency: string | null
}

export const TaxRateSchema = new EntitySchema<TaxRate>({
  name: 'TaxRate',
  tableName: 'tax_rates',
  properties: {
    ...baseColumns<TaxRate>(),
    name: text(),
    code: text(),
    description: text(true),
    percentage_value: decimal(true),
    fixed_value: decimal(true),
    currency: text(true),
  },
})
