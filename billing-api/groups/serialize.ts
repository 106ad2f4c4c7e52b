import { serializeBase } from '../db/common.js'
import type { Group } from './group.entity.js'

export function serializeGroup(g: Group) {
  return { ...serializeBase(g), name: g.name, lookup_key: g.lookup_key, entity_type: g.entity_type, entity_ids: g.entity_ids }
}
