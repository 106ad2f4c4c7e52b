// Maps a stored Price to the pricing engine's input, and validates a new price by
// running it through the engine once, so the engine is the single source of pricing rules.
import { calculateAmount, PricingInputError, type PriceDefinition, type PriceTier as EngineTier } from '../pricing/index.js'
import { ValidationError } from '../../platform/errors.js'
import type { Price, PriceTier } from './price.entity.js'

type PriceUnitColumns = 'price_unit' | 'price_unit_amount' | 'price_unit_tiers' | 'conversion_rate'

export type PriceColumns = Pick<Price, 'type' | 'billing_model' | 'tier_mode' | 'amount' | 'currency' | 'tiers' | 'transform_quantity' | 'min_quantity'> &
  Partial<Pick<Price, PriceUnitColumns>>

/** `field.name`, or `name` when the price is the request body itself. */
export const fieldPath = (field: string, name: string): string => (field ? `${field}.${name}` : name)

const toEngineTiers = (tiers: PriceTier[]): EngineTier[] =>
  tiers.map((t) => ({ up_to: t.up_to ?? null, unit_amount: t.unit_amount, ...(t.flat_amount ? { flat_amount: t.flat_amount } : {}) }))

export function toPriceDefinition(p: PriceColumns): PriceDefinition {
  return {
    type: p.type,
    billing_model: p.billing_model,
    ...(p.tier_mode ? { tier_mode: p.tier_mode } : {}),
    ...(p.billing_model !== 'TIERED' ? { amount: p.amount } : {}),
    currency: p.currency,
    ...(p.tiers ? { tiers: toEngineTiers(p.tiers) } : {}),
    ...(p.transform_quantity ? { transform_quantity: p.transform_quantity } : {}),
    ...(p.min_quantity ? { min_quantity: p.min_quantity } : {}),
    // A stored unit price was validated against its unit, whose base currency is the price's.
    ...(p.price_unit && p.conversion_rate
      ? {
          pricing_unit: { code: p.price_unit, conversion_rate: p.conversion_rate, base_currency: p.currency },
          ...(p.price_unit_amount ? { price_unit_amount: p.price_unit_amount } : {}),
          ...(p.price_unit_tiers ? { price_unit_tiers: toEngineTiers(p.price_unit_tiers) } : {}),
        }
      : {}),
  }
}

export function validatePriceDefinition(def: PriceDefinition, field: string): void {
  try {
    calculateAmount(def, '1')
  } catch (err) {
    if (err instanceof PricingInputError) throw new ValidationError(`${fieldPath(field, err.field)}: ${err.message}`, fieldPath(field, err.field))
    throw err
  }
}
