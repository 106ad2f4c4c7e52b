// Pure: which charges a subscription invoice carries, and their amounts. Quantities for
// usage lines come in already measured; no I/O, no clock.
import {
  applyCommitment, applySharedCommitment, applyWindowedCommitment, calculateAmount, D, prorateCommitment, settleCommitment, toMoneyString,
  type CommitmentInfo, type PriceDefinition,
} from '../pricing/index.js'
import type { Price } from '../plans/price.entity.js'
import type { Subscription, SubscriptionLineItem } from '../subscriptions/subscription.entity.js'
import { nextBoundary } from '../periods/periods.js'
import { cadenceAnchor, periodContaining, priceCadence, sameCadence, subscriptionCadence } from '../periods/cadence.js'
import { toPriceDefinition } from '../plans/index.js'
import type { BillingReason } from '../invoices/index.js'
export type { BillingReason }

export interface Charge {
  lineItem: SubscriptionLineItem
  price: Price
  periodStart: Date
  periodEnd: Date
  /**
   * A recurring FIXED charge for part of its cadence period (a calendar stub period, a line
   * item started or ended inside the period): the billed share of that period, in seconds.
   */
  share?: { seconds: number; of: number }
  /** USAGE lines: the measured usage when the priced quantity was capped by an entitlement */
  measured_quantity?: string
  /**
   * USAGE lines on a period shorter than the line's full cadence period (calendar stub period,
   * cancellation, line item started or ended inside it): the share, in seconds, by which the
   * line's commitment is prorated.
   */
  commitment_share?: { seconds: number; of: number }
  /**
   * A usage line settled over the whole period after threshold cuts (subscriptions/usage-cuts.ts):
   * what the period's live threshold invoices already billed for it; its amount is the whole
   * period's minus this.
   */
  threshold_billed?: string
}

type ChargedSubscription = Pick<Subscription,
  'billing_anchor' | 'billing_period' | 'billing_period_count' | 'billing_cycle' | 'start_date' | 'end_date' | 'trial_end'>

/**
 * A cycle invoice for [start, end) bills arrear charges of that period and advance fixed
 * charges of the next one; the create invoice bills advance charges of the first period.
 * One-time prices are billed once, with the first invoice of their cadence.
 * A line item on another cadence than the subscription's (an annual add-on on a monthly
 * subscription) is billed on its own boundaries only: its arrear charge when `end` closes one
 * of its periods, its advance charge when `end` opens one. A line item's dates bound its
 * charges: nothing after its end_date, nothing before its start_date.
 */
export function chargesForPeriod(
  sub: ChargedSubscription,
  lines: { lineItem: SubscriptionLineItem; price: Price }[],
  periodStart: Date,
  periodEnd: Date,
  reason: BillingReason,
): Charge[] {
  const first = periodStart.getTime() === sub.start_date.getTime()
  const charges: Charge[] = []
  const prorates = reason === 'SUBSCRIPTION_CREATE' || reason === 'SUBSCRIPTION_CYCLE'
  const push = (lineItem: SubscriptionLineItem, price: Price, start: Date, end: Date) => {
    const from = lineItem.start_date && lineItem.start_date > start ? lineItem.start_date : start
    const to = lineItem.end_date && lineItem.end_date < end ? lineItem.end_date : end
    if (from >= to) return
    const cadence = priceCadence(price)
    const part = cadence ? partialShare(periodContaining(cadenceAnchor(sub, cadence), cadence, from), from, to) : null
    const share = prorates && price.type === 'FIXED' ? part : null
    const commitmentShare = price.type === 'USAGE' ? part : null
    charges.push({ lineItem, price, periodStart: from, periodEnd: to, ...(share ? { share } : {}), ...(commitmentShare ? { commitment_share: commitmentShare } : {}) })
  }
  for (const { lineItem, price } of lines) {
    const oneTime = price.billing_period === 'ONETIME'
    const cadence = priceCadence(price)
    const own = !cadence || sameCadence(cadence, subscriptionCadence(sub))
    if (reason === 'SUBSCRIPTION_CREATE') {
      if (price.invoice_cadence !== 'ADVANCE') continue
      if (own) push(lineItem, price, periodStart, periodEnd)
      else {
        const p = periodContaining(cadenceAnchor(sub, cadence), cadence, periodStart)
        push(lineItem, price, periodStart, p.end)
      }
      continue
    }
    if (price.invoice_cadence === 'ARREAR') {
      if (own) {
        if (!oneTime || first) push(lineItem, price, periodStart, periodEnd)
      } else {
        const p = periodContaining(cadenceAnchor(sub, cadence), cadence, new Date(periodEnd.getTime() - 1))
        if (p.end.getTime() === periodEnd.getTime()) push(lineItem, price, p.start < sub.start_date ? sub.start_date : p.start, periodEnd)
      }
    } else if (!oneTime && !(sub.end_date && sub.end_date <= periodEnd) && !(lineItem.end_date && lineItem.end_date <= periodEnd)) {
      if (own) {
        push(lineItem, price, periodEnd, nextBoundary(sub.billing_anchor, sub.billing_period, sub.billing_period_count, periodEnd))
      } else {
        const p = periodContaining(cadenceAnchor(sub, cadence), cadence, periodEnd)
        if (p.start.getTime() === periodEnd.getTime()) push(lineItem, price, p.start, p.end)
      }
    }
  }
  return charges
}

/** The share of the subscription's full billing period that [start, end) covers (stub or cut-short periods), or null when whole. */
export function periodShare(sub: Pick<Subscription, 'billing_anchor' | 'billing_period' | 'billing_period_count' | 'billing_cycle' | 'start_date' | 'trial_end'>, start: Date, end: Date): Charge['share'] | null {
  const cadence = subscriptionCadence(sub)
  return partialShare(periodContaining(cadenceAnchor(sub, cadence), cadence, start), start, end)
}

/** (to - from) / (period length) in whole seconds when [from, to) is less than the full period, else null. */
function partialShare(full: { start: Date; end: Date }, from: Date, to: Date): Charge['share'] | null {
  const sec = (d: Date) => Math.floor(d.getTime() / 1000)
  const total = sec(full.end) - sec(full.start)
  const part = Math.min(sec(to), sec(full.end)) - Math.max(sec(from), sec(full.start))
  return part > 0 && part < total ? { seconds: part, of: total } : null
}

export interface PricedLine extends Charge {
  quantity: string
  amount: string
  /** the commitment applied to the line (spec: InvoiceLineItem.commitment_info), null without one */
  commitment_info: CommitmentInfo | null
}

export interface MeasuredCharge extends Charge {
  quantity: string
  /** windowed line commitments: the usage quantity of every commitment window of the period, in time order */
  windowQuantities?: string[]
  /** windowed line commitments: per window, its share when the period boundary cuts it (see commitmentWindows) */
  windowShares?: ({ seconds: number; of: number } | undefined)[]
}

export type SubscriptionCommitment = Pick<Subscription, 'commitment_amount' | 'overage_factor' | 'enable_true_up'>

export interface Commitments {
  subscription?: SubscriptionCommitment
  /** the invoice period's share of a full billing period when shorter (prorates the subscription's commitment) */
  share?: { seconds: number; of: number } | null
}

/**
 * The commitments an invoice of `reason` applies: none on an AUTO_INVOICE_THRESHOLD invoice (its
 * usage is billed at the normal price; the cycle invoice then settles the commitments over the
 * whole period's usage, minus what the threshold invoices billed), else the line items' own and
 * the subscription's. `share`: see Commitments.
 */
export function commitmentsFor(reason: BillingReason, sub: SubscriptionCommitment, share: Commitments['share'] = null): Commitments | null {
  return reason === 'AUTO_INVOICE_THRESHOLD' ? null : { subscription: sub, share }
}

const fraction = (share: { seconds: number; of: number } | null | undefined) => (share ? D(share.seconds).div(share.of) : null)

const hasLineCommitment = (li: SubscriptionLineItem): boolean => li.commitment_amount != null || li.commitment_quantity != null

/**
 * Amounts per line (rounded once each, half-up to the currency), subtotal as their exact sum.
 * USAGE lines with a commitment are charged utilized + overage + true-up (pricing/commitment.ts):
 * a line's own commitment first; else the subscription's commitment_amount, shared by all its
 * usage lines without one, in line order. See billing-api/pricing/README.md.
 * Short periods prorate non-windowed commitments (`commitment_share`, `commitments.share`); a
 * line with `threshold_billed` is billed its whole-period amount minus that (usage-cuts.ts).
 */
export function priceCharges(
  charges: MeasuredCharge[], currency: string, commitments: Commitments | null = null,
): { lines: PricedLine[]; subtotal: string } {
  const subscription = commitments?.subscription
  const shared: number[] = []
  const lines: PricedLine[] = charges.map((c, i) => {
    const { windowQuantities: _windows, windowShares: _shares, ...charge } = c
    const def = toPriceDefinition(c.price)
    if (commitments && c.price.type === 'USAGE' && hasLineCommitment(c.lineItem)) {
      const { amount, info } = lineCommitment(c, def, currency)
      return { ...charge, amount: toMoneyString(amount, currency), commitment_info: info }
    }
    if (commitments && c.price.type === 'USAGE' && subscription?.commitment_amount != null) shared.push(i)
    const full = calculateAmount(def, c.quantity).unrounded
    const amount = D(toMoneyString(c.share ? full.times(c.share.seconds).div(c.share.of) : full, currency)).minus(c.threshold_billed ?? 0)
    return { ...charge, amount: toMoneyString(amount, currency), commitment_info: null }
  })
  if (shared.length && subscription?.commitment_amount != null) {
    const factor = subscription.overage_factor ?? '1'
    const periodShare = fraction(commitments?.share)
    const terms = { amount: subscription.commitment_amount, overage_factor: factor, true_up_enabled: subscription.enable_true_up }
    const applied = periodShare ? prorateCommitment(terms, periodShare) : terms
    const splits = applySharedCommitment(
      shared.map((i) => calculateAmount(toPriceDefinition(charges[i].price), charges[i].quantity).unrounded),
      applied,
    )
    shared.forEach((i, k) => {
      const { amount, info } = settleCommitment(splits[k], currency, {
        amount: D(applied.amount).toString(), quantity: null, overage_factor: factor, is_windowed: false, true_up_enabled: subscription.enable_true_up,
      }, charges[i].threshold_billed)
      lines[i] = { ...lines[i], amount: toMoneyString(amount, currency), commitment_info: info }
    })
  }
  const subtotal = lines.reduce((sum, l) => sum.plus(l.amount), D(0))
  return { lines, subtotal: toMoneyString(subtotal, currency) }
}

/**
 * A line's own commitment: commitment_amount, or commitment_quantity priced at the line's price.
 * Windowed, it applies to every window's usage on its own (a missing window list counts the
 * whole period as one window).
 */
function lineCommitment(c: MeasuredCharge, def: PriceDefinition, currency: string) {
  const li = c.lineItem
  const committed = li.commitment_amount ?? calculateAmount(def, li.commitment_quantity!).unrounded
  const terms = { amount: committed, overage_factor: li.commitment_overage_factor ?? '1', true_up_enabled: li.commitment_true_up_enabled === true }
  const priced = (q: string) => calculateAmount(def, q).unrounded
  // windowed: each window cut by the period boundary is prorated on its own; otherwise the period's share
  const share = li.commitment_windowed ? null : fraction(c.commitment_share)
  const applied = share ? prorateCommitment(terms, share) : terms
  const split = li.commitment_windowed
    ? applyWindowedCommitment((c.windowQuantities ?? [c.quantity]).map(priced), terms, c.windowShares?.map((w) => fraction(w) ?? D(1)))
    : applyCommitment(priced(c.quantity), applied)
  return settleCommitment(split, currency, {
    amount: D(applied.amount).toString(), quantity: li.commitment_quantity ?? null,
    overage_factor: terms.overage_factor, is_windowed: li.commitment_windowed === true, true_up_enabled: terms.true_up_enabled,
  }, c.threshold_billed)
}
