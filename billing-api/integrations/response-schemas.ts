// Response schemas of the integration routes (registered by module.ts, referred to by $id).
import { alwaysNull, dateTimeString, objectOf, recordSchema, str, stringOrNull } from '../http/response-schemas.js'

export const integrationConnectionSchema = recordSchema('IntegrationConnection', {
  provider: str,
  name: str,
  /** each credential obscured (sk_****abcd): credentials are stored encrypted and never returned */
  credentials: { type: 'object', additionalProperties: str },
  /** provider-specific settings as given */
  settings: { type: 'object', additionalProperties: true },
})

export const entityIntegrationMappingSchema = recordSchema('EntityIntegrationMapping', {
  entity_type: str,
  entity_id: str,
  provider_type: str,
  provider_entity_id: str,
})

export const syncResultSchema = objectOf({
  entity_type: str,
  entity_id: str,
  provider: str,
  method: str,
  provider_entity_id: str,
  outcome: str,
  /** pull: the status the provider reports */
  provider_status: str,
}, { optional: ['provider_status'] })

/** Flexprice's shape of a connection (/secrets/integrations/...): display_id is the obscured API key. */
export const integrationSecretSchema = {
  $id: 'IntegrationSecret',
  ...objectOf({
    id: str, name: str, provider: str, type: str, status: str, display_id: stringOrNull,
    roles: { type: 'array', items: str }, user_type: alwaysNull, expires_at: alwaysNull, last_used_at: alwaysNull,
    created_at: dateTimeString, updated_at: dateTimeString,
  }),
}

/** GET /secrets/integrations/linked: the providers the environment has a connection to. */
export const linkedProvidersSchema = objectOf({ providers: { type: 'array', items: str } })
