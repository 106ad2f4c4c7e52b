// Pure billing-period arithmetic, in UTC. Month-based periods keep the anchor's day of
// month and clamp it to the last day of shorter months (Jan 31 -> Feb 28/29 -> Mar 31).

export const BILLING_PERIODS = ['DAILY', 'WEEKLY', 'MONTHLY', 'QUARTERLY', 'HALF_YEARLY', 'ANNUAL', 'ONETIME'] as const
export type BillingPeriod = (typeof BILLING_PERIODS)[number]

const DAY_MS = 86_400_000

const MONTHS: Partial<Record<BillingPeriod, number>> = { MONTHLY: 1, QUARTERLY: 3, HALF_YEARLY: 6, ANNUAL: 12 }

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate()
}

/** The n-th period boundary after `anchor` (n may be 0). */
export function boundary(anchor: Date, period: BillingPeriod, count: number, n: number): Date {
  if (period === 'DAILY') return new Date(anchor.getTime() + n * count * DAY_MS)
  if (period === 'WEEKLY') return new Date(anchor.getTime() + n * count * 7 * DAY_MS)
  const months = MONTHS[period]
  if (!months) throw new Error(`billing period ${period} has no recurring boundaries`)
  const total = anchor.getUTCMonth() + n * months * count
  const year = anchor.getUTCFullYear() + Math.floor(total / 12)
  const month = ((total % 12) + 12) % 12
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month))
  return new Date(Date.UTC(year, month, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()))
}

/** The first boundary strictly after `at`. */
export function nextBoundary(anchor: Date, period: BillingPeriod, count: number, at: Date): Date {
  // Estimate n, then walk: boundaries are monotonic in n.
  const approxMs = { DAILY: DAY_MS, WEEKLY: 7 * DAY_MS }[period as 'DAILY' | 'WEEKLY'] ?? (MONTHS[period] ?? 1) * 28 * DAY_MS
  let n = Math.max(0, Math.floor((at.getTime() - anchor.getTime()) / (approxMs * count)) - 1)
  while (boundary(anchor, period, count, n) <= at) n++
  while (n > 0 && boundary(anchor, period, count, n - 1) > at) n--
  return boundary(anchor, period, count, n)
}

/** Calendar billing anchors on the start of the period's unit (midnight UTC, first of the month, January 1st). */
export function calendarAnchor(start: Date, period: BillingPeriod): Date {
  const y = start.getUTCFullYear()
  const m = start.getUTCMonth()
  switch (period) {
    case 'DAILY':
      return new Date(Date.UTC(y, m, start.getUTCDate()))
    case 'WEEKLY': {
      const day = new Date(Date.UTC(y, m, start.getUTCDate()))
      return new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * DAY_MS) // Monday
    }
    case 'QUARTERLY':
      return new Date(Date.UTC(y, m - (m % 3), 1))
    case 'HALF_YEARLY':
      return new Date(Date.UTC(y, m - (m % 6), 1))
    case 'ANNUAL':
      return new Date(Date.UTC(y, 0, 1))
    default:
      return new Date(Date.UTC(y, m, 1))
  }
}

/** Minute precision for invoice idempotency keys (spec: Errors 12). */
export function minuteKey(d: Date): string {
  return d.toISOString().slice(0, 16)
}
