// Pure: the usage reset period an entitlement's usage is counted in. Periods are aligned on the
// granting subscription's billing anchor (a calendar subscription: the calendar start of the
// unit, midnight UTC, Monday, the 1st, January 1st), so a MONTHLY reset on a monthly plan
// resets with the invoice. The first period starts no earlier than the subscription.
import { cadenceAnchor, periodContaining, type Cadence } from '../periods/cadence.js'
import type { UsageResetPeriod } from './entitlement.entity.js'

export interface AnchoredSubscription {
  billing_anchor: Date
  billing_cycle: 'anniversary' | 'calendar'
  start_date: Date
}

export interface UsagePeriod {
  start: Date
  /** null: NEVER resets, usage counts from the subscription's start onwards */
  end: Date | null
}

const CADENCE: Record<Exclude<UsageResetPeriod, 'NEVER'>, Cadence['period']> = {
  DAILY: 'DAILY', WEEKLY: 'WEEKLY', MONTHLY: 'MONTHLY', YEARLY: 'ANNUAL',
}

export function usagePeriodAt(reset: UsageResetPeriod, sub: AnchoredSubscription, at: Date): UsagePeriod {
  if (reset === 'NEVER') return { start: sub.start_date, end: null }
  const cadence: Cadence = { period: CADENCE[reset], count: 1 }
  const p = periodContaining(cadenceAnchor({ ...sub, trial_end: null }, cadence), cadence, at)
  return { start: p.start < sub.start_date ? sub.start_date : p.start, end: p.end }
}
