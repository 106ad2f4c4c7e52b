// Pure credit grant schedule: which grant periods of a subscription are due at `now` and which
// come next. No I/O, no clock: dates in, dates out (UTC, the period math of subscriptions/periods.ts).
//
// - The first period starts at the later of the subscription's start_date and the grant's
//   start_date; each period ends at the next boundary of the grant's anchor (credit_grant_anchor,
//   else the subscription's billing_anchor for BILLING_PERIOD grants and its start_date for
//   MONTHLY/ANNUAL ones) and the next period starts there. An application is scheduled for its
//   period_start.
// - BILLING_PERIOD follows the subscription's billing period (x period_count); MONTHLY is
//   period_count months; ANNUAL period_count years.
// - ONETIME grants have exactly one period, starting at the subscription start, with no end.
// - Periods stop at the grant's end_date and the subscription's end_date.
// - Catch-up rule (spec): every period whose scheduled_for <= now is due, so a subscription
//   created (or backdated) after periods have elapsed gets one application per missed period,
//   in order.
import type { BillingPeriod } from '../periods/periods.js'
import { boundary, nextBoundary } from '../periods/periods.js'
import type { CreditGrant } from './credit-grant.entity.js'

export type GrantTerms = Pick<CreditGrant, 'period' | 'period_count' | 'credit_grant_anchor' | 'start_date' | 'end_date'>

export interface SubscriptionTerms {
  start_date: Date
  end_date: Date | null
  billing_anchor: Date
  billing_period: BillingPeriod
  billing_period_count: number
}

export interface GrantPeriod {
  period_start: Date
  period_end: Date | null
  scheduled_for: Date
}

export interface GrantSchedule {
  /** scheduled_for <= now, oldest first */
  due: GrantPeriod[]
  /** the next `upcoming` periods after now, oldest first */
  upcoming: GrantPeriod[]
}

/** A guard against runaway loops (a daily grant on a subscription backdated for decades). */
const MAX_PERIODS = 1000

export function grantSchedule(grant: GrantTerms, sub: SubscriptionTerms, now: Date, upcoming = 3): GrantSchedule {
  const out: GrantSchedule = { due: [], upcoming: [] }
  const first = grant.start_date && grant.start_date > sub.start_date ? grant.start_date : sub.start_date
  const stop = earliest(grant.end_date, sub.end_date)
  if (stop && first >= stop) return out
  const push = (p: GrantPeriod) => (p.scheduled_for <= now ? out.due : out.upcoming).push(p)

  if (grant.period === 'ONETIME') {
    push({ period_start: first, period_end: null, scheduled_for: first })
    return out
  }
  const { unit, count, anchor } = cadenceOf(grant, sub)
  let start = first
  for (let i = 0; i < MAX_PERIODS; i++) {
    if ((stop && start >= stop) || (start > now && out.upcoming.length >= upcoming)) break
    const boundaryEnd = nextBoundary(anchor, unit, count, start)
    const end = stop && boundaryEnd > stop ? stop : boundaryEnd
    push({ period_start: start, period_end: end, scheduled_for: start })
    start = end
  }
  return out
}

function cadenceOf(grant: GrantTerms, sub: SubscriptionTerms): { unit: BillingPeriod; count: number; anchor: Date } {
  switch (grant.period) {
    case 'BILLING_PERIOD':
      return { unit: sub.billing_period, count: sub.billing_period_count * grant.period_count, anchor: grant.credit_grant_anchor ?? sub.billing_anchor }
    case 'MONTHLY':
      return { unit: 'MONTHLY', count: grant.period_count, anchor: grant.credit_grant_anchor ?? sub.start_date }
    case 'ANNUAL':
      return { unit: 'ANNUAL', count: grant.period_count, anchor: grant.credit_grant_anchor ?? sub.start_date }
    default:
      throw new Error(`credit grant period ${grant.period} has no recurring boundaries`)
  }
}

const EXPIRY_UNITS: Record<NonNullable<CreditGrant['expiration_duration_unit']>, BillingPeriod> = {
  DAY: 'DAILY', WEEK: 'WEEKLY', MONTH: 'MONTHLY', YEAR: 'ANNUAL',
}

/**
 * When the credits of a period expire: expiration_duration units after period_start (month
 * ends clamp like billing periods). No duration, or a duration of 0, means they never expire.
 */
export function grantExpiry(periodStart: Date, duration: number | null, unit: CreditGrant['expiration_duration_unit']): Date | null {
  if (!duration || !unit) return null
  return boundary(periodStart, EXPIRY_UNITS[unit], duration, 1)
}

/** The application's idempotency key, also the wallet top-up's key. */
export function applicationKey(grantId: string, subscriptionId: string, periodStart: Date): string {
  return `${grantId}:${subscriptionId}:${periodStart.toISOString()}`
}

function earliest(a: Date | null, b: Date | null): Date | null {
  if (!a) return b
  if (!b) return a
  return a < b ? a : b
}
