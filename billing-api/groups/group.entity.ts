import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, json, text, type BaseRecord } from '../db/common.js'

export const GROUP_ENTITY_TYPES = ['price', 'feature'] as const
export type GroupEntityType = (typeof GROUP_ENTITY_TYPES)[number]

export interface Group extends BaseRecord {
  name: string
  lookup_key: string | null
  entity_type: GroupEntityType
  /** members, in the order the client gave them */
  entity_ids: string[]
}

export const GroupSchema = new EntitySchema<Group>({
  name: 'Group',
  tableName: 'groups',
  properties: {
    ...baseColumns<Group>(),
    name: text(),
    lookup_key: text(true),
    entity_type: text(),
    entity_ids: json(),
  },
})
