import { EntitySchema } from '@mikro-orm/core'
import type { KeyScope } from '../http/route-access.js'
import { baseColumns, text, timestamp, type BaseRecord } from '../db/common.js'

/** An API key (spec: secrets). Only its keyed hash is stored (api-key.ts). */
export interface ApiKey extends BaseRecord {
  user_id: string
  name: string
  key_hash: string
  /** how key_hash was made: `hmac-sha256:<secret id>`, or `sha256` for rows not yet upgraded */
  key_hash_scheme: string
  display_id: string
  /** `full`, or `read_only`: reads only (billing-api/http/route-access.ts) */
  scope: KeyScope
  expires_at: Date | null
  last_used_at: Date | null
}

export const ApiKeySchema = new EntitySchema<ApiKey>({
  name: 'ApiKey',
  tableName: 'api_keys',
  properties: {
    ...baseColumns<ApiKey>(),
    user_id: text(),
    name: text(),
    key_hash: text(),
    key_hash_scheme: text(),
    display_id: text(),
    scope: text(),
    expires_at: timestamp(true),
    last_used_at: timestamp(true),
  },
})
