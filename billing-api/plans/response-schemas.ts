// Response schemas of the plan and price routes (registered by module.ts, referred to by $id).
import { alwaysNull, anyJson, dateTimeOrNull, integer, recordSchema, ref, str, stringOrNull } from '../http/response-schemas.js'

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
  /** trial_period_days under the name Flexprice's SDK reads */
  trial_period: integer,
  /** FIAT, or CUSTOM when the price is written in a pricing unit */
  price_unit_type: str,
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
  // relations Meterline does not have on a price (overrides, formatted amounts; a group lists its prices)
  // or does not expand (meter_id, price_unit_id, entity_id): null for clients that require the keys
  parent_price_id: alwaysNull,
  group_id: alwaysNull,
  display_amount: alwaysNull,
  display_price_unit_amount: alwaysNull,
  group: alwaysNull,
  meter: alwaysNull,
  pricing_unit: alwaysNull,
  plan: alwaysNull,
  addon: alwaysNull,
})

export const planSchema = recordSchema('Plan', {
  name: str,
  lookup_key: stringOrNull,
  description: stringOrNull,
  display_order: integer,
  max_price_sequence: integer,
  prices: { type: 'array', items: ref('Price') },
  /** on a single plan's read; null in lists */
  credit_grants: { type: ['array', 'null'], items: ref('CreditGrant') },
  /** on a single plan's read; null in lists */
  entitlements: { type: ['array', 'null'], items: ref('Entitlement') },
})
