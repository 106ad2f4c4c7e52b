// Response schemas of the user and API key routes (registered by module.ts, referred to by $id).
import { alwaysNull, dateTimeOrNull, dateTimeString, metadataResponse, objectOf, str, stringArray, stringOrNull } from '../http/response-schemas.js'

const apiKeyProperties = {
  id: str,
  tenant_id: str,
  environment_id: str,
  user_id: str,
  name: str,
  display_id: str,
  /** read_only: reads everything of its environment, changes nothing */
  scope: { type: 'string', enum: ['full', 'read_only'] },
  status: str,
  expires_at: dateTimeOrNull,
  last_used_at: dateTimeOrNull,
  created_at: dateTimeString,
  updated_at: dateTimeString,
  /** always private_key: a secret key */
  type: str,
  // no provider keys, per-key roles or user types here (the key acts as its user): null for clients that require the keys
  provider: alwaysNull,
  roles: alwaysNull,
  user_type: alwaysNull,
}

/** A tenant-wide record: no environment_id. */
export const userSchema = {
  $id: 'User',
  ...objectOf({
    id: str,
    tenant_id: str,
    name: stringOrNull,
    email: stringOrNull,
    type: str,
    roles: stringArray,
    status: str,
    metadata: metadataResponse,
    created_at: dateTimeString,
    updated_at: dateTimeString,
    created_by: stringOrNull,
    updated_by: stringOrNull,
    /** the tenant is not expanded (tenant_id): null for clients that require the key */
    tenant: alwaysNull,
  }),
}

/** The key as listed: never its secret. */
export const apiKeySchema = { $id: 'ApiKey', ...objectOf(apiKeyProperties) }

/** The answer of creating a key: the plaintext `api_key`, shown this once. */
export const createdApiKeySchema = {
  $id: 'CreatedApiKey',
  // `secret`: the key as listed, where Flexprice's SDK reads it
  ...objectOf({ ...apiKeyProperties, api_key: str, secret: { $ref: 'ApiKey#' } }),
}
