// Response schemas of the tenant, environment and signup routes (registered by module.ts).
import { dateTimeString, metadataResponse, objectOf, str, stringOrNull } from '../http/response-schemas.js'

/** spec: Address; every key written, null when the tenant did not set it */
const addressResponse = objectOf({
  address_line1: stringOrNull, address_line2: stringOrNull, address_city: stringOrNull,
  address_state: stringOrNull, address_postal_code: stringOrNull, address_country: stringOrNull,
}, { nullable: true })

export const tenantSchema = {
  $id: 'Tenant',
  ...objectOf({
    id: str,
    name: str,
    status: str,
    /** spec: TenantBillingDetails; every key written, null when not set */
    billing_details: objectOf({ address: addressResponse, email: stringOrNull, help_email: stringOrNull, phone: stringOrNull }),
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
