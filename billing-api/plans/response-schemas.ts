// Response schemas of the plan and price routes (registered by module.ts, referred to by $id).
import { anyJson, dateTimeOrNull, integer, recordSchema, ref, str, stringOrNull } from '../http/response-schemas.js'

export const priceSchema = recordSchema('Price', {
  entity_type: str,
  entity_id: str,
  type: str,
  billing_model: str,
  tier_mode: stringOrNull,
  currency: str,
  amount: str,
  meter_id: stringOrNull,
  billing_period: str,
  billing_period_count: integer,
  billing_cadence: str,
  invoice_cadence: str,
  trial_period_days: integer,
  /** tier list of TIERED prices (spec: Price.tiers) */
  tiers: anyJson,
  transform_quantity: anyJson,
  min_quantity: stringOrNull,
  price_unit: stringOrNull,
  price_unit_id: stringOrNull,
  price_unit_amount: stringOrNull,
  price_unit_tiers: anyJson,
  conversion_rate: stringOrNull,
  lookup_key: stringOrNull,
  description: stringOrNull,
  display_name: stringOrNull,
  sequence: integer,
  start_date: dateTimeOrNull,
  end_date: dateTimeOrNull,
})

export const planSchema = recordSchema('Plan', {
  name: str,
  lookup_key: stringOrNull,
  description: stringOrNull,
  display_order: integer,
  max_price_sequence: integer,
  prices: { type: 'array', items: ref('Price') },
  /** on a single plan's read, not in lists */
  credit_grants: { type: 'array', items: ref('CreditGrant') },
  /** on a single plan's read, not in lists */
  entitlements: { type: 'array', items: ref('Entitlement') },
}, { optional: ['credit_grants', 'entitlements'] })
