// Pure: which charges a subscription invoice carries, and their amounts. Quantities for
// usage lines come in already measured; no I/O, no clock.
import { calculateAmount, D, toMoneyString } from '../pricing/index.js'
import type { Price } from '../plans/price.entity.js'
import type { Subscription, SubscriptionLineItem } from '../subscriptions/subscription.entity.js'
import { nextBoundary } from '../subscriptions/periods.js'
import { toPriceDefinition } from '../plans/price-definition.js'

export type BillingReason = 'SUBSCRIPTION_CREATE' | 'SUBSCRIPTION_CYCLE' | 'PRORATION' | 'SUBSCRIPTION_TRIAL_START'

export interface Charge {
  lineItem: SubscriptionLineItem
  price: Price
  periodStart: Date
  periodEnd: Date
}

/**
 * A cycle invoice for [start, end) bills arrear charges of that period and advance fixed
 * charges of the next one; the create invoice bills advance charges of the first period.
 * One-time prices are billed once, with the first invoice of their cadence.
 */
export function chargesForPeriod(
  sub: Pick<Subscription, 'billing_anchor' | 'billing_period' | 'billing_period_count' | 'start_date' | 'end_date'>,
  lines: { lineItem: SubscriptionLineItem; price: Price }[],
  periodStart: Date,
  periodEnd: Date,
  reason: BillingReason,
): Charge[] {
  const first = periodStart.getTime() === sub.start_date.getTime()
  const charges: Charge[] = []
  for (const { lineItem, price } of lines) {
    const oneTime = price.billing_period === 'ONETIME'
    if (reason === 'SUBSCRIPTION_CREATE') {
      if (price.invoice_cadence === 'ADVANCE') charges.push({ lineItem, price, periodStart, periodEnd })
      continue
    }
    if (price.invoice_cadence === 'ARREAR') {
      if (!oneTime || first) charges.push({ lineItem, price, periodStart, periodEnd })
    } else if (!oneTime && !(sub.end_date && sub.end_date <= periodEnd)) {
      const nextEnd = nextBoundary(sub.billing_anchor, sub.billing_period, sub.billing_period_count, periodEnd)
      charges.push({ lineItem, price, periodStart: periodEnd, periodEnd: nextEnd })
    }
  }
  return charges
}

export interface PricedLine extends Charge {
  quantity: string
  amount: string
}

/** Amounts per line (rounded once each, half-up to the currency), subtotal as their exact sum. */
export function priceCharges(charges: (Charge & { quantity: string })[], currency: string): { lines: PricedLine[]; subtotal: string } {
  let subtotal = D(0)
  const lines = charges.map((c) => {
    const amount = calculateAmount(toPriceDefinition(c.price), c.quantity).amount
    subtotal = subtotal.plus(amount)
    return { ...c, amount: toMoneyString(amount, currency) }
  })
  return { lines, subtotal: toMoneyString(subtotal, currency) }
}
