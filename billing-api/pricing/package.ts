import type { Decimal } from 'decimal.js';
import { D } from './money.js';
import type { ChargeResult } from './types.js';

/**
 * PACKAGE: quantity is sold in packages of `divideBy` units at `packageAmount`
 * each. packages = ceil(quantity / divideBy) for round 'up', floor for 'down';
 * quantity 0 is 0 packages either way. The breakdown line's quantity is the
 * number of packages and its unit_amount the package price.
 */
export function calculatePackage(
  packageAmount: Decimal,
  quantity: Decimal,
  divideBy: Decimal,
  round: 'up' | 'down',
): ChargeResult {
  const packages = packageCount(quantity, divideBy, round);
  const total = packages.times(packageAmount);
  const zero = new D(0);
  return {
    total,
    lines: [{ from: zero, to: null, quantity: packages, unitAmount: packageAmount, flatAmount: zero, amount: total }],
  };
}

/** Whole packages for a non-negative quantity, using exact integer division and remainder. */
export function packageCount(quantity: Decimal, divideBy: Decimal, round: 'up' | 'down'): Decimal {
  const whole = quantity.divToInt(divideBy);
  const hasRemainder = !quantity.mod(divideBy).isZero();
  return round === 'up' && hasRemainder ? whole.plus(1) : whole;
}
