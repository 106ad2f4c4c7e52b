// Pure proration math for a period cut short (cancellation). Second-exact: the used share of
// [periodStart, periodEnd) is (end - periodStart) / (periodEnd - periodStart) measured in whole
// seconds (sub-second parts are dropped), so a 30-day period cut after 12 days uses exactly
// 12/30 whatever the month lengths. Amounts are rounded once, half-up to the currency; the
// credit of an already billed charge is the billed amount minus the used part, so
// used + credit always equals what was billed (no cent is lost to rounding twice).
import type { Decimal } from 'decimal.js'
import { D, toMoneyString } from '../pricing/index.js'

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000)

/** The used share of the period, clamped to [0, 1]. */
export function usedFraction(periodStart: Date, periodEnd: Date, end: Date): Decimal {
  const total = seconds(periodEnd) - seconds(periodStart)
  if (total <= 0) throw new RangeError('the period must end after it starts')
  const used = Math.min(Math.max(seconds(end) - seconds(periodStart), 0), total)
  return new D(used).div(total)
}

/** The part of `amount` (a decimal string) for [periodStart, end), rounded to the currency. */
export function proratedAmount(amount: string, periodStart: Date, periodEnd: Date, end: Date, currency: string): string {
  return toMoneyString(new D(amount).times(usedFraction(periodStart, periodEnd, end)), currency)
}

/** An amount billed in advance for the whole period, split into its used part and the credit for the rest. */
export function splitBilledAmount(billed: string, periodStart: Date, periodEnd: Date, end: Date, currency: string): { used: string; credit: string } {
  const used = proratedAmount(billed, periodStart, periodEnd, end, currency)
  return { used, credit: toMoneyString(new D(billed).minus(used), currency) }
}

/** What is left of a whole-period amount from `from` to periodEnd: the amount minus its used part. */
export function remainingAmount(amount: string, periodStart: Date, periodEnd: Date, from: Date, currency: string): string {
  return splitBilledAmount(amount, periodStart, periodEnd, from, currency).credit
}

export interface QuantityChangeProration {
  /** negative: the unused part of the old quantity's whole-period amount */
  credit: string
  /** the new quantity's whole-period amount for [effective, periodEnd) */
  debit: string
  net: string
}

/**
 * A quantity change at `effective` of a charge billed in advance for [periodStart, periodEnd):
 * the old quantity's whole-period amount is credited for the rest of the period and the new
 * one's is charged for it. Each side is rounded once, like splitBilledAmount.
 */
export function prorateQuantityChange(
  oldPeriodAmount: string, newPeriodAmount: string, periodStart: Date, periodEnd: Date, effective: Date, currency: string,
): QuantityChangeProration {
  const credit = new D(remainingAmount(oldPeriodAmount, periodStart, periodEnd, effective, currency)).negated()
  const debit = remainingAmount(newPeriodAmount, periodStart, periodEnd, effective, currency)
  return { credit: toMoneyString(credit, currency), debit, net: toMoneyString(credit.plus(debit), currency) }
}
