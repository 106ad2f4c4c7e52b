import { EntitySchema } from '@mikro-orm/core'
import { baseProperties, integer, text, type BaseRecord } from '../db/common.js'

export interface Plan extends BaseRecord {
  name: string
  lookup_key: string | null
  description: string | null
  display_order: number
}

export const PlanSchema = new EntitySchema<Plan>({
  name: 'Plan',
  tableName: 'plans',
  properties: {
    ...(baseProperties as any),
    name: text(),
    lookup_key: text(true),
    description: text(true),
    display_order: integer(),
  },
})
