// Maps a stored Price to the pricing engine's input, and validates a new price by
// running it through the engine once, so the engine is the single source of pricing rules.
import { calculateAmount, PricingInputError, type PriceDefinition } from '../pricing/index.js'
import { ValidationError } from '../../platform/errors.js'
import type { Price } from './price.entity.js'

export function toPriceDefinition(p: Pick<Price, 'type' | 'billing_model' | 'tier_mode' | 'amount' | 'currency' | 'tiers' | 'transform_quantity' | 'min_quantity'>): PriceDefinition {
  return {
    type: p.type,
    billing_model: p.billing_model,
    ...(p.tier_mode ? { tier_mode: p.tier_mode } : {}),
    ...(p.billing_model !== 'TIERED' ? { amount: p.amount } : {}),
    currency: p.currency,
    ...(p.tiers ? { tiers: p.tiers.map((t) => ({ up_to: t.up_to, unit_amount: t.unit_amount, ...(t.flat_amount ? { flat_amount: t.flat_amount } : {}) })) } : {}),
    ...(p.transform_quantity ? { transform_quantity: p.transform_quantity } : {}),
    ...(p.min_quantity ? { min_quantity: p.min_quantity } : {}),
  }
}

export function validatePriceDefinition(def: PriceDefinition, field: string): void {
  try {
    calculateAmount(def, '1')
  } catch (err) {
    if (err instanceof PricingInputError) throw new ValidationError(`${field}.${err.field}: ${err.message}`, `${field}.${err.field}`)
    throw err
  }
}
