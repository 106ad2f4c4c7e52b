// Pure wallet arithmetic: which credits a debit consumes and how credits and currency convert.
// Decimals in, decimals out; no I/O, no clock (the caller passes `now`).
import type { Decimal } from 'decimal.js'
import { D } from '../pricing/index.js'

/** Credits are kept to 12 decimals, the precision of the API's decimal strings. */
export const CREDIT_DECIMALS = 12

export interface AvailableCredit {
  id: string
  available: Decimal | string
  /** lower is consumed first; null is consumed after every numbered priority */
  priority: number | null
  expiry_date: Date | null
  created_at: Date
}

export interface Allocation {
  id: string
  credits: Decimal
}

export interface DebitPlan {
  allocations: Allocation[]
  /** what the usable credits could not cover (a PREPAID wallet refuses a plan with a shortfall) */
  shortfall: Decimal
}

/** A credit is usable at `now` when it has credits left and has not expired (expiry_date <= now is expired). */
export function isUsable(c: AvailableCredit, now: Date): boolean {
  return new D(c.available).gt(0) && (c.expiry_date === null || c.expiry_date.getTime() > now.getTime())
}

const nullsLast = (a: number | null, b: number | null): number => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a - b)

/**
 * Debit order: priority ascending (null last), then the soonest expiry_date (null = never
 * expires, last), then the oldest created_at, then id, so the order is total and repeatable.
 */
export function compareForDebit(a: AvailableCredit, b: AvailableCredit): number {
  return (
    nullsLast(a.priority, b.priority) ||
    nullsLast(a.expiry_date?.getTime() ?? null, b.expiry_date?.getTime() ?? null) ||
    a.created_at.getTime() - b.created_at.getTime() ||
    (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
  )
}

/** Takes `credits` (> 0) from the usable credits in debit order; expired ones are never touched. */
export function allocateDebit(credits: AvailableCredit[], amount: Decimal | string, now: Date): DebitPlan {
  let left = new D(amount)
  if (!left.gt(0)) throw new RangeError('a debit must be greater than 0')
  const allocations: Allocation[] = []
  for (const c of credits.filter((c) => isUsable(c, now)).sort(compareForDebit)) {
    if (left.isZero()) break
    const take = D.min(left, new D(c.available))
    allocations.push({ id: c.id, credits: take })
    left = left.minus(take)
  }
  return { allocations, shortfall: left }
}

/**
 * Currency -> credits for a debit: amount / conversion_rate, rounded UP to 12 decimals when it
 * does not divide evenly, so rounding never gives the customer free usage.
 */
export function debitCreditsForAmount(amount: Decimal | string, conversionRate: Decimal | string): Decimal {
  return new D(amount).div(new D(conversionRate)).toDecimalPlaces(CREDIT_DECIMALS, D.ROUND_UP)
}

/**
 * Currency -> credits for a top-up: amount / conversion_rate, rounded DOWN to 12 decimals, so
 * rounding never grants credits that were not paid for.
 */
export function topUpCreditsForAmount(amount: Decimal | string, conversionRate: Decimal | string): Decimal {
  return new D(amount).div(new D(conversionRate)).toDecimalPlaces(CREDIT_DECIMALS, D.ROUND_DOWN)
}

/** Credits -> currency at full precision (rounding to the currency is the caller's, once). */
export function creditsToCurrency(credits: Decimal | string, conversionRate: Decimal | string): Decimal {
  return new D(credits).times(new D(conversionRate))
}
