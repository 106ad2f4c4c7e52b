import type { Decimal } from 'decimal.js';
import { parseDecimal, PricingInputError } from './money.js';
import type { ChargeResult, PricingUnitDefinition } from './types.js';

/**
 * Validates a price's pricing unit against the price currency and returns the
 * conversion rate: the base-currency value of one pricing unit (1 credit = 0.01 USD).
 */
export function parseConversionRate(unit: PricingUnitDefinition, currency: string): Decimal {
  if (typeof unit !== 'object' || unit === null) {
    throw new PricingInputError('pricing_unit', 'expected a pricing unit object');
  }
  if (typeof unit.base_currency !== 'string' || unit.base_currency.toUpperCase() !== currency.toUpperCase()) {
    throw new PricingInputError(
      'pricing_unit.base_currency',
      `must equal the price currency ${currency}, got ${String(unit.base_currency)}`,
    );
  }
  const rate = parseDecimal(unit.conversion_rate, 'pricing_unit.conversion_rate');
  if (rate.lte(0)) throw new PricingInputError('pricing_unit.conversion_rate', 'must be greater than 0');
  return rate;
}

/** Pricing-unit amount -> base currency, unrounded (rounding happens once, on the total). */
export function toBaseCurrency(priceUnitAmount: Decimal, conversionRate: Decimal): Decimal {
  return priceUnitAmount.times(conversionRate);
}

/**
 * Converts every money figure of a charge computed in pricing units; quantities
 * and tier bounds are unchanged. Multiplication distributes over the sum (exact
 * within the 50 significant digits of D), so converted lines still sum to the total.
 */
export function convertCharge(charge: ChargeResult, conversionRate: Decimal): ChargeResult {
  return {
    total: toBaseCurrency(charge.total, conversionRate),
    lines: charge.lines.map((line) => ({
      ...line,
      unitAmount: toBaseCurrency(line.unitAmount, conversionRate),
      flatAmount: toBaseCurrency(line.flatAmount, conversionRate),
      amount: toBaseCurrency(line.amount, conversionRate),
    })),
  };
}
