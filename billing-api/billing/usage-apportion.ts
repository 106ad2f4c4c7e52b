// Pure: usage_analytics / usage_breakdown items of a usage line from per-group usage rows.
//
// - Items are ordered by usage share (weight) descending, then by key, so the order is total.
// - cost: the line amount apportioned by weight, each share rounded half-up to the currency;
//   the rounding remainder goes to the largest item (the first in that order), so the costs
//   sum exactly to the line amount.
// - percentage: the weight's share of 100 with 2 decimals, by the same rule (they sum to exactly
//   100.00 when there is any weight).
// - weight: the group's usage for additive aggregations (SUM, COUNT, WEIGHTED_SUM); for MAX, LATEST, AVG and
//   COUNT_UNIQUE, whose per-group values do not add up to the line's quantity, the group's
//   event_count. When every weight is zero (e.g. a SUM of zeros), event_count is used instead.
import type { Decimal } from 'decimal.js'
import { D, currencyPrecision, toMoneyString } from '../pricing/index.js'

export interface GroupUsage<K> {
  key: K
  /** the group's value under the meter's aggregation (decimal string) */
  usage: string
  event_count: number
}

export interface ApportionedItem<K> {
  key: K
  usage: string
  cost: string
  percentage: string
  event_count: number
}

const ADDITIVE = new Set(['SUM', 'COUNT', 'WEIGHTED_SUM'])

/**
 * Splits `total` by non-negative `weights` at `decimals` (half-up) so the parts sum to `total`.
 * The rounding remainder goes to the first part (the caller orders the largest first). Only when
 * many shares rounded up together would that flip the first part's sign does the remainder
 * continue to the next parts, none of which crosses zero.
 */
export function splitExactly(total: Decimal, weights: Decimal[], decimals: number): Decimal[] {
  const sum = weights.reduce((a, w) => a.plus(w), D(0))
  if (sum.isZero()) return weights.map(() => D(0))
  const parts = weights.map((w) => total.times(w).div(sum).toDecimalPlaces(decimals, D.ROUND_HALF_UP))
  let remainder = total.minus(parts.reduce((a, p) => a.plus(p), D(0)))
  for (let i = 0; i < parts.length && !remainder.isZero(); i++) {
    const adjusted = parts[i].plus(remainder)
    const crossesZero = total.isNegative() ? adjusted.gt(0) : adjusted.lt(0)
    const take = crossesZero ? parts[i].negated() : remainder
    parts[i] = parts[i].plus(take)
    remainder = remainder.minus(take)
  }
  return parts
}

export function apportionUsage<K>(
  rows: GroupUsage<K>[], aggregation: string, lineAmount: string, currency: string, keyText: (k: K) => string,
): ApportionedItem<K>[] {
  if (rows.length === 0) return []
  let weighted = rows.map((r) => ({ r, w: ADDITIVE.has(aggregation) ? D(r.usage) : D(r.event_count) }))
  if (weighted.every((x) => x.w.isZero())) weighted = rows.map((r) => ({ r, w: D(r.event_count) }))
  weighted.sort((a, b) => b.w.comparedTo(a.w) || (keyText(a.r.key) < keyText(b.r.key) ? -1 : keyText(a.r.key) > keyText(b.r.key) ? 1 : 0))
  const weights = weighted.map((x) => x.w)
  const costs = splitExactly(D(lineAmount), weights, currencyPrecision(currency))
  const percentages = splitExactly(D(100), weights, 2)
  return weighted.map(({ r }, i) => ({
    key: r.key,
    usage: D(r.usage).toString(),
    cost: toMoneyString(costs[i], currency),
    percentage: percentages[i].toFixed(2),
    event_count: r.event_count,
  }))
}
