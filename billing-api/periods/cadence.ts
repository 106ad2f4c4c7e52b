// Pure: the billing cadences of a subscription's line items. A line item bills on its price's
// cadence (billing_period and billing_period_count); every cadence is aligned on the
// subscription's anchor (calendar subscriptions: the calendar start of that period unit), so
// a monthly and an annual line item of one subscription share their year boundaries.
import { boundary, calendarAnchor, type BillingPeriod } from './periods.js'

/** The scheduling fields of a subscription that cadences read. */
interface Schedule {
  billing_period: BillingPeriod
  billing_period_count: number
  billing_cycle: 'anniversary' | 'calendar'
  billing_anchor: Date
  start_date: Date
  current_period_start: Date
  current_period_end: Date
  trial_end: Date | null
}

/** The cadence fields of a price. */
type PriceCadence = { billing_period: BillingPeriod; billing_period_count: number }

export interface Cadence {
  period: Exclude<BillingPeriod, 'ONETIME'>
  count: number
}

export interface CadencePeriod {
  start: Date
  end: Date
}

type SubCadence = Pick<Schedule, 'billing_period' | 'billing_period_count' | 'billing_anchor' | 'billing_cycle' | 'start_date' | 'current_period_start' | 'current_period_end'>
  & Partial<Pick<Schedule, 'trial_end'>>

/** The cadence of a recurring price; null for a one-time charge. */
export function priceCadence(price: PriceCadence): Cadence | null {
  if (price.billing_period === 'ONETIME') return null
  return { period: price.billing_period, count: price.billing_period_count }
}

export const sameCadence = (a: Cadence, b: Cadence): boolean => a.period === b.period && a.count === b.count

export const subscriptionCadence = (sub: Pick<Schedule, 'billing_period' | 'billing_period_count'>): Cadence =>
  ({ period: sub.billing_period as Cadence['period'], count: sub.billing_period_count })

/** The anchor a cadence's boundaries count from on this subscription (paid billing starts at trial_end, as in firstPeriod). */
export function cadenceAnchor(sub: Pick<Schedule, 'billing_anchor' | 'billing_cycle' | 'start_date'> & Partial<Pick<Schedule, 'trial_end'>>, cadence: Cadence): Date {
  return sub.billing_cycle === 'calendar' ? calendarAnchor(sub.trial_end ?? sub.start_date, cadence.period) : sub.billing_anchor
}

/** The period [start, end) of `cadence` (boundaries n * count periods from `anchor`) that contains `at`. */
export function periodContaining(anchor: Date, cadence: Cadence, at: Date): CadencePeriod {
  // Walk from an estimate; boundaries are monotonic in n and n may be negative (before the anchor).
  const approxDays = { DAILY: 1, WEEKLY: 7, MONTHLY: 30, QUARTERLY: 91, HALF_YEARLY: 182, ANNUAL: 365 }[cadence.period] * cadence.count
  let n = Math.floor((at.getTime() - anchor.getTime()) / (approxDays * 86_400_000))
  while (boundary(anchor, cadence.period, cadence.count, n) > at) n--
  while (boundary(anchor, cadence.period, cadence.count, n + 1) <= at) n++
  return { start: boundary(anchor, cadence.period, cadence.count, n), end: boundary(anchor, cadence.period, cadence.count, n + 1) }
}

/**
 * The current period of a line item billed on `cadence`, at `at`. On the subscription's own
 * cadence it is the subscription's current period (which may be a stub or a trial window);
 * on another cadence it is that cadence's period containing `at`, starting no earlier than
 * the subscription.
 */
export function lineItemPeriod(sub: SubCadence, cadence: Cadence, at: Date): CadencePeriod {
  if (sameCadence(cadence, subscriptionCadence(sub))) return { start: sub.current_period_start, end: sub.current_period_end }
  const p = periodContaining(cadenceAnchor(sub, cadence), cadence, at)
  return { start: p.start < sub.start_date ? sub.start_date : p.start, end: p.end }
}

/** The distinct recurring cadences among `prices` (one-time charges have none). */
export function distinctCadences(prices: PriceCadence[]): Cadence[] {
  const out: Cadence[] = []
  for (const c of prices.map(priceCadence)) {
    if (c && !out.some((o) => sameCadence(o, c))) out.push(c)
  }
  return out
}
