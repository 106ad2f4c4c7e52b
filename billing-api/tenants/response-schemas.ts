// Response schemas of the tenant, environment and signup routes (registered by module.ts).
import { dateTimeString, metadataResponse, objectOf, str } from '../http/response-schemas.js'

export const tenantSchema = {
  $id: 'Tenant',
  ...objectOf({
    id: str,
    name: str,
    status: str,
    /** free-form billing details (address, tax ids) as the tenant set them */
    billing_details: { type: 'object', additionalProperties: true },
    metadata: metadataResponse,
    created_at: dateTimeString,
    updated_at: dateTimeString,
  }),
}

export const environmentSchema = {
  $id: 'Environment',
  ...objectOf({
    id: str,
    tenant_id: str,
    name: str,
    type: str,
    status: str,
    metadata: metadataResponse,
    created_at: dateTimeString,
    updated_at: dateTimeString,
  }),
}

export const signupSchema = objectOf({
  tenant_id: str,
  user_id: str,
  environments: objectOf({ production: str, development: str }),
  /** bound to the production environment; shown once */
  api_key: str,
})
