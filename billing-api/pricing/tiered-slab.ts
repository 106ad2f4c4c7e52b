import type { Decimal } from 'decimal.js';
import { D } from './money.js';
import type { ChargeLine, ChargeResult, ParsedTier } from './types.js';

/**
 * SLAB (graduated): each tier prices only its own units. Tier i covers
 * (from, up_to], so it holds min(quantity, up_to) - from units. A tier is
 * "touched" when quantity > from; every touched tier adds its flat_amount once.
 * With non-negative amounts the total never decreases as quantity grows.
 */
export function calculateTieredSlab(tiers: ParsedTier[], quantity: Decimal): ChargeResult {
  const lines: ChargeLine[] = [];
  let total: Decimal = new D(0);
  for (const tier of tiers) {
    if (quantity.lte(tier.from)) break;
    const top = tier.upTo === null ? quantity : D.min(quantity, tier.upTo);
    const units = top.minus(tier.from);
    const amount = units.times(tier.unitAmount).plus(tier.flatAmount);
    lines.push({
      tier: tier.index,
      from: tier.from,
      to: tier.upTo,
      quantity: units,
      unitAmount: tier.unitAmount,
      flatAmount: tier.flatAmount,
      amount,
    });
    total = total.plus(amount);
  }
  return { total, lines };
}
