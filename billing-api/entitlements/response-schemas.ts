// Response schemas of the entitlement routes (registered by module.ts, referred to by $id).
import { bool, dateTimeOrNull, integer, integerOrNull, recordSchema, ref, str, stringOrNull } from '../http/response-schemas.js'

export const entitlementSchema = recordSchema('Entitlement', {
  entity_type: str,
  entity_id: str,
  plan_id: stringOrNull,
  feature_id: str,
  is_enabled: bool,
  usage_limit: integerOrNull,
  is_soft_limit: bool,
  static_value: stringOrNull,
  usage_reset_period: stringOrNull,
  display_order: integer,
  start_date: dateTimeOrNull,
  end_date: dateTimeOrNull,
  feature: ref('Feature'),
})
