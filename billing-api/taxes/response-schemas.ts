// Response schemas of the tax routes (registered by module.ts, referred to by $id).
import { str, stringOrNull, integer, bool, recordSchema } from '../http/response-schemas.js'

export const taxRateSchema = recordSchema('TaxRate', {
  name: str,
  code: str,
  description: stringOrNull,
  percentage_value: stringOrNull,
  fixed_value: stringOrNull,
  currency: stringOrNull,
})

export const taxAssociationSchema = recordSchema('TaxAssociation', {
  tax_rate_id: str,
  entity_type: str,
  entity_id: str,
  priority: integer,
  auto_apply: bool,
})
