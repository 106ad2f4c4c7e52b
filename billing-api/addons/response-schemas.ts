// Response schemas of the add-on routes (registered by module.ts, referred to by $id).
import { str, stringOrNull, recordSchema, ref } from '../http/response-schemas.js'

export const addonSchema = recordSchema('Addon', {
  name: str,
  lookup_key: str,
  description: stringOrNull,
  prices: { type: 'array', items: ref('Price') },
  entitlements: { type: 'array', items: ref('Entitlement') },
  /** always onetime: attached at most once per subscription */
  type: str,
})
