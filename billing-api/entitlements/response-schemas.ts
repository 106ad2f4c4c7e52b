// Response schemas of the entitlement routes (registered by module.ts, referred to by $id).
import { alwaysNull, bool, dateTimeOrNull, integer, integerOrNull, objectOf, recordSchema, ref, str, stringOrNull } from '../http/response-schemas.js'

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

/** Per feature: what the live grants add up to (access.ts combineGrants) and where it comes from. */
const aggregatedFeature = objectOf({
  feature: ref('Feature'),
  entitlement: objectOf({
    is_enabled: bool,
    is_soft_limit: bool,
    /** the enabled grants' limits added up; null: unlimited */
    usage_limit: integerOrNull,
    usage_reset_period: stringOrNull,
    static_values: { type: 'array', items: str },
  }),
  sources: {
    type: 'array',
    items: objectOf({
      entitlement_id: str,
      entity_type: str,
      entity_id: str,
      /** not expanded: null */
      entity_name: alwaysNull,
      subscription_id: str,
      is_enabled: bool,
      usage_limit: integerOrNull,
      static_value: stringOrNull,
      usage_reset_period: stringOrNull,
      /** no per-grant quantity here: null */
      quantity: alwaysNull,
    }),
  },
})

export const customerEntitlementsSchema = objectOf({ customer_id: str, features: { type: 'array', items: aggregatedFeature } })
export const subscriptionEntitlementsSchema = objectOf({ subscription_id: str, plan_id: str, features: { type: 'array', items: aggregatedFeature } })
