import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, text, timestamp, type BaseRecord } from '../db/common.js'

/** An API key (spec: secrets). Only its SHA-256 hash is stored. */
export interface ApiKey extends BaseRecord {
  user_id: string
  name: string
  key_hash: string
  display_id: string
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
    display_id: text(),
    expires_at: timestamp(true),
    last_used_at: timestamp(true),
  },
})
