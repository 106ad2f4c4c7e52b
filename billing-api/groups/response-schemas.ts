// Response schemas of the group routes (registered by module.ts, referred to by $id).
import { str, stringOrNull, stringArray, recordSchema } from '../http/response-schemas.js'

export const groupSchema = recordSchema('Group', {
  name: str,
  lookup_key: stringOrNull,
  entity_type: str,
  entity_ids: stringArray,
})
