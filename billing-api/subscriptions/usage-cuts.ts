// Automatic invoice threshold cuts. An AUTO_INVOICE_THRESHOLD invoice bills the arrear usage
// of [cut, now) and moves the subscription's "last cut" to its period_end. Every later invoice
// of a window containing cuts (the cycle invoice, a cancellation's PRORATION invoice) measures
// arrear usage only from the last cut on, so no usage is billed twice: per price, the threshold
// invoices plus the period's remaining line cover the period exactly once. Each window is
// priced on its own, so this is exact for per-unit prices and additive meters (SUM, COUNT);
// graduated or volume tiers restart at each cut, and MAX/LATEST/unique meters see each window alone.
// A VOIDED or deleted threshold invoice does not cut: its usage is billed again by the cycle.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingReason, Charge } from '../invoices/charges.js'
import { InvoiceSchema } from '../invoices/invoice.entity.js'
import type { Subscription } from './subscription.entity.js'

const isArrearUsage = (c: Charge) => c.price.type === 'USAGE' && c.price.invoice_cadence === 'ARREAR'

/**
 * Pure: the charges an invoice of `reason` carries once usage before `cut` is billed. A
 * threshold invoice carries arrear usage only; usage windows start at the cut at the earliest,
 * and a usage charge whose window lies entirely before the cut is dropped.
 */
export function chargesAfterCut(charges: Charge[], reason: BillingReason, cut: Date | null): Charge[] {
  if (reason === 'SUBSCRIPTION_CREATE') return charges
  const kept = reason === 'AUTO_INVOICE_THRESHOLD' ? charges.filter(isArrearUsage) : charges
  if (!cut) return kept
  return kept.flatMap((c) => {
    if (!isArrearUsage(c) || c.periodStart >= cut) return [c]
    return cut >= c.periodEnd ? [] : [{ ...c, periodStart: cut }]
  })
}

/** The end of the last live threshold invoice that starts inside [start, end), or null. */
export async function lastThresholdCut(em: EntityManager, sub: Subscription, start: Date, end: Date): Promise<Date | null> {
  const [last] = await em.find(
    InvoiceSchema,
    {
      tenant_id: sub.tenant_id, environment_id: sub.environment_id, subscription_id: sub.id, billing_reason: 'AUTO_INVOICE_THRESHOLD',
      invoice_status: { $ne: 'VOIDED' }, status: { $ne: 'deleted' }, period_start: { $gte: start, $lt: end },
    },
    { orderBy: { period_end: 'desc' }, limit: 1 },
  )
  return last?.period_end ?? null
}

/** The charges of an invoice for [start, end) with the threshold cuts applied (reads only). */
export async function applyThresholdCuts(em: EntityManager, sub: Subscription, charges: Charge[], start: Date, end: Date, reason: BillingReason): Promise<Charge[]> {
  // A threshold invoice's own window starts at the last cut by construction (and a recompute
  // must not find the invoice itself as a cut).
  if (reason === 'SUBSCRIPTION_CREATE' || reason === 'AUTO_INVOICE_THRESHOLD' || !charges.some(isArrearUsage)) return chargesAfterCut(charges, reason, null)
  return chargesAfterCut(charges, reason, await lastThresholdCut(em, sub, start, end))
}
