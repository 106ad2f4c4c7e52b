import type { Decimal } from 'decimal.js';
import { D } from './money.js';
import type { ChargeResult, ParsedTier } from './types.js';

/**
 * VOLUME: every unit is priced at the tier the total quantity falls in:
 * total = quantity x unit_amount + flat_amount of that tier.
 *
 * Boundaries: `up_to` is inclusive, so quantity == up_to stays in that tier and
 * up_to + 1 (or any quantity above up_to) moves to the next. A total can therefore
 * DROP when crossing into a cheaper tier (5000 @ 0.008 = 40 > 5001 @ 0.005 = 25.005);
 * that is the model, not a bug. Quantity 0 reaches no tier and costs 0.
 */
export function calculateTieredVolume(tiers: ParsedTier[], quantity: Decimal): ChargeResult {
  if (quantity.isZero()) return { total: new D(0), lines: [] };
  const tier = findVolumeTier(tiers, quantity);
  const total = quantity.times(tier.unitAmount).plus(tier.flatAmount);
  return {
    total,
    lines: [{
      tier: tier.index,
      from: tier.from,
      to: tier.upTo,
      quantity,
      unitAmount: tier.unitAmount,
      flatAmount: tier.flatAmount,
      amount: total,
    }],
  };
}

/** The first tier whose inclusive up_to is >= quantity; validated tiers always end open. */
export function findVolumeTier(tiers: ParsedTier[], quantity: Decimal): ParsedTier {
  const tier = tiers.find((t) => t.upTo === null || quantity.lte(t.upTo));
  if (!tier) throw new Error('tiers must end with an open-ended tier; call validateTiers first');
  return tier;
}
