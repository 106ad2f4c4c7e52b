// Response schemas of the entitlement routes (registered by module.ts, referred to by $id).
import { alwaysNull, bool, dateTimeOrNull, integer, integerOrNull, recordSchema, ref, str, stringOrNull } from '../http/response-schemas.js'

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
  /** the feature's type */
  feature_type: str,
  // entitlements are not inherited here and the granting plan or add-on is not expanded (entity_id):
  // null for clients that require the keys
  parent_entitlement_id: alwaysNull,
  plan: alwaysNull,
  addon: alwaysNull,
})
