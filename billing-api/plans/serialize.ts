import { serializeCreditGrant } from '../credit-grants/index.js'
import type { CreditGrant } from '../credit-grants/credit-grant.entity.js'
import { iso, serializeBase } from '../db/common.js'
import type { Plan } from './plan.entity.js'
import type { Price } from './price.entity.js'

export function serializePrice(p: Price) {
  return {
    ...serializeBase(p),
    entity_type: p.entity_type, entity_id: p.entity_id, type: p.type, billing_model: p.billing_model, tier_mode: p.tier_mode,
    currency: p.currency, amount: p.amount, meter_id: p.meter_id, billing_period: p.billing_period,
    billing_period_count: p.billing_period_count, billing_cadence: p.billing_cadence, invoice_cadence: p.invoice_cadence,
    trial_period_days: p.trial_period_days, trial_period: p.trial_period_days, price_unit_type: p.price_unit_id ? 'CUSTOM' : 'FIAT', tiers: p.tiers, transform_quantity: p.transform_quantity, min_quantity: p.min_quantity,
    price_unit: p.price_unit ?? null, price_unit_id: p.price_unit_id ?? null, price_unit_amount: p.price_unit_amount ?? null,
    price_unit_tiers: p.price_unit_tiers ?? null, conversion_rate: p.conversion_rate ?? null,
    lookup_key: p.lookup_key, description: p.description, display_name: p.display_name, sequence: p.sequence,
    start_date: iso(p.start_date), end_date: iso(p.end_date),
    parent_price_id: null, group_id: null, display_amount: null, display_price_unit_amount: null,
    group: null, meter: null, pricing_unit: null, plan: null, addon: null,
  }
}

/** List items carry credit_grants and entitlements as null; a single plan's read carries them. */
export function serializePlan(plan: Plan, prices: Price[], creditGrants?: CreditGrant[], entitlements?: unknown[]) {
  return {
    ...serializeBase(plan), name: plan.name, lookup_key: plan.lookup_key, description: plan.description,
    display_order: plan.display_order, max_price_sequence: plan.max_price_sequence, prices: prices.map(serializePrice),
    credit_grants: creditGrants ? creditGrants.map(serializeCreditGrant) : null,
    entitlements: entitlements ?? null,
  }
}
