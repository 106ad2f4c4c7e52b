import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, text, type BaseRecord } from '../db/common.js'

/** An add-on: bought on top of a plan; its prices live in prices (entity_type ADDON), its features in entitlements. */
export interface Addon extends BaseRecord {
  name: string
  lookup_key: string
  description: string | null
}

export const AddonSchema = new EntitySchema<Addon>({
  name: 'Addon',
  tableName: 'addons',
  properties: {
    ...baseColumns<Addon>(),
    name: text(),
    lookup_key: text(),
    description: text(true),
  },
})
