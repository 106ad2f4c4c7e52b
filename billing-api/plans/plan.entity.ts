import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, integer, text, type BaseRecord } from '../db/common.js'

export interface Plan extends BaseRecord {
  name: string
  lookup_key: string | null
  description: string | null
  display_order: number
  /** the sequence of the plan's latest price; the next price takes this + 1 */
  max_price_sequence: number
}

export const PlanSchema = new EntitySchema<Plan>({
  name: 'Plan',
  tableName: 'plans',
  properties: {
    ...baseColumns<Plan>(),
    name: text(),
    lookup_key: text(true),
    description: text(true),
    display_order: integer(),
    max_price_sequence: integer(),
  },
})
