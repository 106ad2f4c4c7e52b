import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, text, type BaseRecord } from '../db/common.js'

export interface PricingUnit extends BaseRecord {
  name: string
  code: string
  symbol: string | null
  base_currency: string
  /** decimal string: base-currency value of one unit (1 credit = "0.01" USD) */
  conversion_rate: string
}

export const PricingUnitSchema = new EntitySchema<PricingUnit>({
  name: 'PricingUnit',
  tableName: 'pricing_units',
  properties: {
    ...baseColumns<PricingUnit>(),
    name: text(),
    code: text(),
    symbol: text(true),
    base_currency: text(),
    conversion_rate: decimal(),
  },
})
