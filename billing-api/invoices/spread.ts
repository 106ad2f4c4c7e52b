// Pure: splits an invoice-wide amount (an invoice-level discount, prepaid credits) over the
// invoice's lines. No I/O.
import type { Decimal } from 'decimal.js'
import { currencyPrecision, D } from '../pricing/index.js'

/**
 * Shares of `total` proportional to `weights` (negative weights count as 0), in the currency's
 * minor unit, summing to `total` exactly (largest remainder: every share is first rounded down,
 * the cents left go one each to the largest fractional parts, earlier lines first on ties), so a
 * share never exceeds its weight when total <= sum of the weights. With no positive weight the
 * whole amount goes to the last line.
 */
export function spreadOverLines(total: Decimal, weights: Decimal[], currency: string): Decimal[] {
  const shares = weights.map(() => new D(0))
  if (weights.length === 0 || total.isZero()) return shares
  const positive = weights.map((w) => (w.gt(0) ? w : new D(0)))
  const sum = positive.reduce((a, b) => a.plus(b), new D(0))
  if (sum.isZero()) {
    shares[shares.length - 1] = total
    return shares
  }
  const places = currencyPrecision(currency)
  const unit = new D(1).div(new D(10).pow(places))
  const exact = positive.map((w) => total.mul(w).div(sum))
  const floors = exact.map((e) => e.toDecimalPlaces(places, D.ROUND_DOWN))
  let left = total.minus(floors.reduce((a, b) => a.plus(b), new D(0)))
  const order = exact
    .map((e, i) => ({ i, frac: e.minus(floors[i]) }))
    .sort((a, b) => b.frac.comparedTo(a.frac) || a.i - b.i)
  for (const { i } of order) {
    if (left.lt(unit)) break
    floors[i] = floors[i].plus(unit)
    left = left.minus(unit)
  }
  return floors
}
