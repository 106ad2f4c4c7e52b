// The invoice of a period cut short by a cancellation, for [current_period_start, end):
// arrear usage measured for exactly that window, arrear recurring fixed charges prorated,
// one-time arrear charges in full, and a negative credit line for the unused part of every
// recurring ADVANCE fixed charge already billed for a period that extends past `end` (the
// billed line's own period_start/period_end, so an annual add-on on a monthly subscription
// is credited up to its own period end). The credit is of what was charged: the billed line's
// amount less its coupon discounts. The subscription's coupons then apply to the charge lines
// as on a cycle invoice (apply-coupons.ts); credit lines are never discounted. Billing reason
// PRORATION; idempotent by the same key scheme and unique index as every subscription invoice.
// A negative net (more credited than used) stays on the invoice as its total with amount_due
// 0: credit notes and wallet refunds are not part of this service yet.
import type { EntityManager } from '@mikro-orm/postgresql'
import { UniqueConstraintViolationException } from '@mikro-orm/core'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { InvoiceLineItemSchema, InvoiceSchema, type Invoice } from '../invoices/invoice.entity.js'
import { computeSubscriptionInvoice } from './subscription-invoice.js'
import { invoiceIdempotencyKey, findLiveInvoice, liveInvoiceWithKey } from '../invoices/index.js'
import { applyCoupons, couponApplies, type CouponDiscounts } from './apply-coupons.js'
import { attachedCoupons } from './invoice-coupons.js'
import { writeCouponApplications } from './coupon-application-rows.js'
import { writeSubscriptionInvoice } from './subscription-invoice-rows.js'
import { PriceSchema } from '../plans/price.entity.js'
import { D, toMoneyString } from '../pricing/index.js'
import { proratedAmount, splitBilledAmount } from '../periods/proration.js'
import { SubscriptionLineItemSchema, type Subscription } from '../subscriptions/subscription.entity.js'
export interface FinalLine {
  subscription_line_item_id: string
  price_id: string
  price_type: string
  meter_id: string | null
  display_name: string | null
  quantity: string
  amount: string
  period_start: Date
  period_end: Date
}

/** Reads only: the lines of the partial-period invoice. `sub.end_date` must already be `end`. */
export async function computeProrationLines(ctx: BillingContext, em: EntityManager, sub: Subscription, end: Date): Promise<FinalLine[]> {
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const { current_period_start: start, current_period_end: periodEnd, currency } = sub
  // With end_date = end the cycle rules give the arrear charges of [start, end) and no advance ones.
  const computed = await computeSubscriptionInvoice(ctx, em, sub, start, end, 'PRORATION')
  const lines: FinalLine[] = computed.lines.map((l) => ({
    subscription_line_item_id: l.lineItem.id, price_id: l.price.id, price_type: l.price.type, meter_id: l.price.meter_id,
    display_name: l.lineItem.display_name, quantity: l.quantity, period_start: l.periodStart, period_end: l.periodEnd,
    amount: l.price.type === 'FIXED' && l.price.billing_period !== 'ONETIME' ? proratedAmount(l.amount, start, periodEnd, end, currency) : l.amount,
  }))
  // Advance charges billed for a period that extends past `end`: the next period's fee on the
  // previous cycle invoice, a quantity change's or an add-on's debit (modify.ts, line-set-change.ts),
  // an add-on on a longer cadence billed for its own period.
  const billed = await em.find(InvoiceLineItemSchema, {
    subscription_id: sub.id, ...scope, status: 'published', price_type: 'FIXED', period_start: { $lt: end }, period_end: { $gt: end },
  }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const liveInvoices = new Set(
    (await em.find(InvoiceSchema, { id: { $in: billed.map((b) => b.invoice_id) }, ...scope, invoice_status: { $ne: 'VOIDED' }, status: { $ne: 'deleted' } })).map((i) => i.id),
  )
  const prices = new Map((await em.find(PriceSchema, { id: { $in: billed.map((b) => b.price_id!).filter(Boolean) }, ...scope })).map((p) => [p.id, p]))
  const subLines = new Map((await em.find(SubscriptionLineItemSchema, { subscription_id: sub.id, ...scope })).map((l) => [l.id, l]))
  for (const b of billed) {
    const price = b.price_id ? prices.get(b.price_id) : undefined
    if (!liveInvoices.has(b.invoice_id) || !price || price.invoice_cadence !== 'ADVANCE' || price.billing_period === 'ONETIME') continue
    // What the customer was charged for it: the line less its coupon discounts.
    const charged = D(b.amount).minus(b.line_item_discount ?? 0).minus(b.invoice_level_discount ?? 0)
    if (charged.lte(0) || !b.period_start || !b.period_end) continue
    // A line item replaced by a quantity change had its unused part credited by that change.
    if (b.subscription_line_item_id && subLines.get(b.subscription_line_item_id)?.status === 'archived') continue
    const { credit } = splitBilledAmount(charged.toString(), b.period_start, b.period_end, end, currency)
    if (D(credit).isZero()) continue
    lines.push({
      subscription_line_item_id: b.subscription_line_item_id!, price_id: price.id, price_type: 'FIXED', meter_id: null,
      display_name: `Unused time: ${subLines.get(b.subscription_line_item_id ?? '')?.display_name ?? b.display_name ?? price.id}`,
      quantity: b.quantity, amount: toMoneyString(D(credit).negated(), currency), period_start: end, period_end: b.period_end,
    })
  }
  return lines
}

/**
 * The subscription's coupons on the final invoice's lines, as on a cycle invoice for the same
 * window (couponApplies, applyCoupons): credit lines weigh nothing, so only charges are discounted.
 */
export async function prorationDiscounts(em: EntityManager, sub: Subscription, end: Date, lines: FinalLine[]): Promise<CouponDiscounts> {
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const coupons = (await attachedCoupons(em, scope, sub.id)).filter((c) => couponApplies(c, sub.current_period_start, end))
  return applyCoupons(lines.map((l) => ({ subscription_line_item_id: l.subscription_line_item_id, amount: l.amount })), coupons, sub.currency)
}

/** Persists the partial-period invoice once (a savepoint; a lost race returns the winner). */
export async function createProrationInvoice(ctx: BillingContext, em: EntityManager, sub: Subscription, end: Date): Promise<Invoice> {
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const start = sub.current_period_start
  const key = invoiceIdempotencyKey(sub.id, 'PRORATION', start, end)
  const existing = await findLiveInvoice(em, scope, key)
  if (existing) return existing
  const lines = await computeProrationLines(ctx, em, sub, end)
  const discounts = await prorationDiscounts(em, sub, end, lines)
  const net = lines.reduce((sum, l) => sum.plus(l.amount), D(0))
  const subtotal = toMoneyString(net, sub.currency)
  const total = toMoneyString(net.minus(discounts.total_discount), sub.currency)
  const now = ctx.clock.now()
  try {
    return await em.transactional(async (tx) => {
      const written = writeSubscriptionInvoice(tx, {
        subscription: sub, billingReason: 'PRORATION', periodStart: start, periodEnd: end, idempotencyKey: key,
        subtotal, totalDiscount: discounts.total_discount, total, now,
      }, lines.map((l, i) => ({ ...l, ...discounts.lines[i] })))
      writeCouponApplications(tx, written.invoice, sub.id, discounts.applications, written.lines.map((l) => l.id), now)
      return written.invoice
    })
  } catch (err) {
    if (!(err instanceof UniqueConstraintViolationException)) throw err
    return em.findOneOrFail(InvoiceSchema, liveInvoiceWithKey(scope, key))
  }
}
