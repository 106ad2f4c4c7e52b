import type { Decimal } from 'decimal.js';
import { D, parseDecimal, PricingInputError } from './money.js';
import type { ParsedTier } from './types.js';

/**
 * Validates a tier list and returns it as Decimals. Rules: at least one tier;
 * every up_to but the last is a positive integer, strictly ascending; the last
 * tier is open ended (up_to null), so every quantity falls in some tier.
 * Errors name the field: `tiers[2].up_to`, `price_unit_tiers[0].unit_amount`.
 */
export function validateTiers(tiers: unknown, field = 'tiers'): ParsedTier[] {
  if (!Array.isArray(tiers) || tiers.length === 0) {
    throw new PricingInputError(field, 'expected a non-empty list of tiers');
  }
  const parsed: ParsedTier[] = [];
  let from: Decimal = new D(0);
  tiers.forEach((tier: unknown, index) => {
    const at = `${field}[${index}]`;
    if (typeof tier !== 'object' || tier === null) throw new PricingInputError(at, 'expected a tier object');
    const { up_to, unit_amount, flat_amount } = tier as Record<string, unknown>;
    const isLast = index === tiers.length - 1;

    let upTo: Decimal | null = null;
    if (up_to === null || up_to === undefined) {
      if (!isLast) throw new PricingInputError(`${at}.up_to`, 'only the last tier may be open ended');
    } else {
      if (isLast) throw new PricingInputError(`${at}.up_to`, 'the last tier must be open ended (null)');
      if (typeof up_to !== 'number' || !Number.isSafeInteger(up_to) || up_to <= 0) {
        // eslint-disable-next-line @typescript-eslint/no-base-to-string -- echoes whatever the caller sent
        throw new PricingInputError(`${at}.up_to`, `expected a positive integer, got ${String(up_to)}`);
      }
      upTo = new D(up_to);
      if (upTo.lte(from)) {
        throw new PricingInputError(`${at}.up_to`, `must be greater than the previous tier's up_to (${from.toString()})`);
      }
    }

    parsed.push({
      index,
      from,
      upTo,
      unitAmount: parseDecimal(unit_amount, `${at}.unit_amount`),
      flatAmount: flat_amount === undefined || flat_amount === null ? new D(0) : parseDecimal(flat_amount, `${at}.flat_amount`),
    });
    if (upTo) from = upTo;
  });
  return parsed;
}
