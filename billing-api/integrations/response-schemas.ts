// Response schemas of the integration routes (registered by module.ts, referred to by $id).
import { objectOf, recordSchema, str } from '../http/response-schemas.js'

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
