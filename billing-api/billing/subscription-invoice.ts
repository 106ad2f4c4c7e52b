// The invoice of a subscription period: computed (no writes: previews, recomputes) and created
// (idempotent per subscription, billing reason and period at minute precision).
import type { EntityManager } from '@mikro-orm/postgresql'
import { UniqueConstraintViolationException } from '@mikro-orm/core'
import { D, toMoneyString } from '../pricing/index.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { meterUsage, usageReader } from '../meters/index.js'
import { invoiceIdempotencyKey, findLiveInvoice, liveInvoiceWithKey } from '../invoices/index.js'
import type { Subscription } from '../subscriptions/subscription.entity.js'
import { chargesForPeriod, commitmentsFor, periodShare, priceCharges, type BillingReason, type Charge, type PricedLine } from './charges.js'
import { measureCommitmentWindows } from './commitment-usage.js'
import { usageStart } from './usage-reset.js'
import {  InvoiceSchema, type Invoice } from '../invoices/invoice.entity.js'
import { cappedQuantity } from './entitlement-limits.js'
import { writeInvoiceLines, writeSubscriptionInvoice } from './subscription-invoice-rows.js'
import { usageAnalyticsForLines } from './usage-analytics.js'
import { applyCoupons, couponApplies, type LineDiscount, type PlannedCouponApplication } from './apply-coupons.js'
import { directReads, type InvoiceReads } from './invoice-reads.js'
import { writeCouponApplications } from './coupon-application-rows.js'
export interface ComputedInvoice {
  subscription: Subscription
  reason: BillingReason
  periodStart: Date
  periodEnd: Date
  lines: (PricedLine & LineDiscount)[]
  subtotal: string
  /** draft computation applies coupons only; taxes and credits wait for finalization */
  couponApplications: PlannedCouponApplication[]
  total_discount: string
  /** subtotal - total_discount */
  total: string
}

/**
 * Computes (reads only) the invoice of a subscription for [start, end), coupons included.
 * `invoiceId`: the invoice being recomputed, whose own coupon applications do not count
 * against the coupons' durations.
 */
export async function computeSubscriptionInvoice(
  ctx: BillingContext, em: EntityManager, sub: Subscription, periodStart: Date, periodEnd: Date, reason: BillingReason, invoiceId?: string,
  reads: InvoiceReads = directReads(em),
): Promise<ComputedInvoice> {
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  // Line items replaced or removed inside the period (archived with their end_date) still owe
  // their arrear charges up to that end; chargesForPeriod clips every charge to its line's dates.
  const lineItems = await reads.lineItems(sub, periodStart)
  const prices = await reads.prices(sub, lineItems.map((l) => l.price_id))
  const byId = new Map(prices.map((p) => [p.id, p]))
  const planned = chargesForPeriod(sub, lineItems.map((lineItem) => ({ lineItem, price: byId.get(lineItem.price_id)! })), periodStart, periodEnd, reason)
  // Usage already billed by automatic threshold invoices is not billed again (subscriptions/usage-cuts.ts).
  const charges = await reads.thresholdCuts(sub, planned, periodStart, periodEnd, reason)
  // hierarchy (subscriptions/hierarchy.ts): a PARENT's usage pools its inherited children's; one
  // lookup per charge window, shared by the usage query and the commitment windows below.
  const customersOf = reads.customersOf(sub)
  const usageCustomers = (c: Charge): Promise<string[]> => customersOf(c.periodStart, c.periodEnd)
  const meterIds = [...new Set(charges.flatMap((c) => (c.price.type === 'USAGE' ? [c.price.meter_id!] : [])))]
  const caps = await reads.caps(sub, meterIds, periodStart)
  const meters = new Map((await reads.meters(sub, meterIds)).map((m) => [m.id, m]))
  const measured = await Promise.all(
    charges.map(async (c) => {
      if (c.price.type !== 'USAGE') return { ...c, quantity: c.lineItem.quantity }
      const meter = meters.get(c.price.meter_id!)
      if (!meter) throw new Error(`meter ${c.price.meter_id} of price ${c.price.id} not found`)
      const usage = await meterUsage(usageReader(ctx), meter, {
        external_customer_ids: await usageCustomers(c),
        start_time: usageStart(meter, c).toISOString(),
        end_time: c.periodEnd.toISOString(),
      })
      // entitlement hard limits (entitlement-limits.ts): the line keeps the measured usage, prices the capped one
      return { ...c, quantity: cappedQuantity(usage.value, caps.get(meter.id) ?? null), measured_quantity: usage.value }
    }),
  )
  // commitments (helper C1): windowed commitments need per-window usage; the subscription's commitment is shared by its usage lines
  const { lines, subtotal } = priceCharges(
    await measureCommitmentWindows(ctx, em, async (c) => ({ external_customer_ids: await usageCustomers(c) }), measured),
    sub.currency, commitmentsFor(reason, sub, periodShare(sub, periodStart, periodEnd)), // short periods prorate the subscription's commitment
  )
  const coupons = (await reads.coupons(scope, sub.id, invoiceId)).filter((c) => couponApplies(c, periodStart, periodEnd))
  const discounts = applyCoupons(lines.map((l) => ({ subscription_line_item_id: l.lineItem.id, amount: l.amount })), coupons, sub.currency)
  return {
    subscription: sub, reason, periodStart, periodEnd, subtotal,
    lines: lines.map((l, i) => ({ ...l, ...discounts.lines[i] })),
    couponApplications: discounts.applications,
    total_discount: discounts.total_discount,
    total: toMoneyString(D(subtotal).minus(discounts.total_discount), sub.currency),
  }
}

/** A zero-amount subscription invoice needs no payment: SKIPPED (spec). Zero is after coupons. */
export const isZeroAmount = (c: ComputedInvoice): boolean => D(c.total).isZero()

/** The draft amounts of a computed invoice (no taxes, no credits yet). */
export function draftAmounts(c: ComputedInvoice, currency: string) {
  const none = toMoneyString('0', currency)
  return {
    subtotal: c.subtotal, total_discount: c.total_discount, total_tax: none, total_prepaid_credits_applied: none,
    total: c.total, amount_due: c.total, amount_remaining: c.total,
  }
}

/** Writes the computed lines and their coupon applications under `invoice` (caller's transaction). */
export function writeComputedLines(tx: EntityManager, invoice: Invoice, computed: ComputedInvoice): void {
  const sub = computed.subscription
  const lineIds = writeInvoiceLines(tx, invoice, sub, computed.lines.map((l) => ({
    subscription_line_item_id: l.lineItem.id, price_id: l.price.id, price_type: l.price.type, meter_id: l.price.meter_id,
    display_name: l.lineItem.display_name, amount: l.amount, quantity: l.measured_quantity ?? l.quantity,
    adjusted_entitlement_quantity: l.price.type === 'USAGE' ? l.quantity : null,
    line_item_discount: l.line_item_discount, invoice_level_discount: l.invoice_level_discount,
    commitment_info: l.commitment_info, period_start: l.periodStart, period_end: l.periodEnd,
  }))).map((line) => line.id)
  writeCouponApplications(tx, invoice, sub.id, computed.couponApplications, lineIds, invoice.last_computed_at ?? new Date())
}

/**
 * Persists the invoice for [start, end) once. A concurrent or repeated call for the same
 * key returns the invoice that won (the partial unique index decides, not a read-then-write).
 */
export async function createSubscriptionInvoice(
  ctx: BillingContext, em: EntityManager, sub: Subscription, periodStart: Date, periodEnd: Date, reason: BillingReason,
): Promise<Invoice> {
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const key = invoiceIdempotencyKey(sub.id, reason, periodStart, periodEnd)
  const existing = await findLiveInvoice(em, scope, key)
  if (existing) return existing
  const computed = await computeSubscriptionInvoice(ctx, em, sub, periodStart, periodEnd, reason)
  try {
    // Inside a caller's transaction this is a savepoint, so a lost race rolls back only itself.
    return await em.transactional(async (tx) => {
      const { invoice } = writeSubscriptionInvoice(tx, {
        subscription: sub, billingReason: reason, periodStart, periodEnd, idempotencyKey: key,
        subtotal: computed.subtotal, totalDiscount: computed.total_discount, total: computed.total, now: ctx.clock.now(),
      }, [])
      writeComputedLines(tx, invoice, computed)
      await usageAnalyticsForLines(ctx, tx, invoice) // A2: usage_analytics / usage_breakdown of the usage lines (usage-analytics.ts)
      return invoice
    })
  } catch (err) {
    if (!(err instanceof UniqueConstraintViolationException)) throw err
    return em.findOneOrFail(InvoiceSchema, liveInvoiceWithKey(scope, key))
  }
}
