import type { Decimal } from 'decimal.js';
import { D } from './money.js';
import type { ChargeResult } from './types.js';

/**
 * FLAT_FEE: amount x quantity. Covers both a fixed fee (FIXED price, quantity =
 * seats or units subscribed) and per-unit usage (USAGE price, amount per unit).
 */
export function calculateFlatFee(unitAmount: Decimal, quantity: Decimal): ChargeResult {
  const total = unitAmount.times(quantity);
  const zero = new D(0);
  return {
    total,
    lines: [{ from: zero, to: null, quantity, unitAmount, flatAmount: zero, amount: total }],
  };
}
