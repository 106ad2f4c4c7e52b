// Response schemas of the tax routes (registered by module.ts, referred to by $id).
import { alwaysNull, str, stringOrNull, integer, bool, recordSchema } from '../http/response-schemas.js'

export const taxRateSchema = recordSchema('TaxRate', {
  name: str,
  code: str,
  description: stringOrNull,
  percentage_value: stringOrNull,
  fixed_value: stringOrNull,
  currency: stringOrNull,
  /** PERCENTAGE or FIXED: which value is set */
  tax_rate_type: str,
  /** ACTIVE while published, else INACTIVE */
  tax_rate_status: str,
  /** Flexprice's INTERNAL/EXTERNAL rate scopes have no counterpart here: null for clients that require the key */
  scope: alwaysNull,
})

export const taxAssociationSchema = recordSchema('TaxAssociation', {
  tax_rate_id: str,
  entity_type: str,
  entity_id: str,
  priority: integer,
  auto_apply: bool,
  // an association applies its rate in any currency, and the rate is read at /taxes/rates/{tax_rate_id}:
  // null for clients that require the keys
  currency: alwaysNull,
  tax_rate: alwaysNull,
})
