// Automatic invoice threshold cuts. An AUTO_INVOICE_THRESHOLD invoice bills the arrear usage
// of [cut, now) and moves the subscription's "last cut" to its period_end. Every later invoice
// of a window containing cuts (the cycle invoice, a cancellation's PRORATION invoice) measures
// arrear usage only from the last cut on, so no usage is billed twice: per price, the threshold
// invoices plus the period's remaining line cover the period exactly once. Each window is
// priced on its own, so this is exact for per-unit prices and additive meters (SUM, COUNT).
// Lines whose price depends on the whole period's usage (TIERED prices, a line commitment, or
// the subscription's shared commitment on an invoice that applies commitments) are not cut:
// they are priced on the whole period's usage, minus what the period's live threshold invoices
// billed for the line (`threshold_billed`), so threshold invoices + this invoice = an invoice
// of the period without cuts. MAX/LATEST/unique meters of per-unit lines see each window alone.
// A VOIDED or deleted threshold invoice does not cut: its usage is billed again by the cycle.
import type { EntityManager } from '@mikro-orm/postgresql'
import { D, toMoneyString } from '../pricing/index.js'
import type { BillingReason, Charge } from './charges.js'
import { InvoiceLineItemSchema, InvoiceSchema } from '../invoices/invoice.entity.js'
import type { Subscription } from '../subscriptions/subscription.entity.js'

const isArrearUsage = (c: Charge) => c.price.type === 'USAGE' && c.price.invoice_cadence === 'ARREAR'

/**
 * Pure: the charges an invoice of `reason` carries once usage before `cut` is billed. A
 * threshold invoice carries arrear usage only; usage windows start at the cut at the earliest,
 * and a usage charge whose window lies entirely before the cut is dropped.
 */
export function chargesAfterCut(
  charges: Charge[], reason: BillingReason, cut: Date | null, billed: ReadonlyMap<string, string> | null = null, sharedCommitment = false,
): Charge[] {
  if (reason === 'SUBSCRIPTION_CREATE') return charges
  const kept = reason === 'AUTO_INVOICE_THRESHOLD' ? charges.filter(isArrearUsage) : charges
  if (!cut) return kept
  return kept.flatMap((c) => {
    if (!isArrearUsage(c) || c.periodStart >= cut) return [c]
    if (billed && settlesWholePeriod(c, sharedCommitment)) return [{ ...c, threshold_billed: billed.get(c.lineItem.id) ?? '0' }]
    return cut >= c.periodEnd ? [] : [{ ...c, periodStart: cut }]
  })
}

/**
 * Pure: whether an arrear usage line's amount depends on the whole period's usage, so the cycle
 * invoice prices it over the whole period (minus what threshold invoices billed) instead of
 * from the last cut: TIERED prices, a line commitment, or a share of the subscription's commitment.
 */
export function settlesWholePeriod(c: Charge, sharedCommitment: boolean): boolean {
  if (c.price.billing_model === 'TIERED') return true
  if (c.lineItem.commitment_amount != null || c.lineItem.commitment_quantity != null) return true
  return sharedCommitment
}

const liveThresholdInvoices = (sub: Subscription, start: Date, end: Date) => ({
  tenant_id: sub.tenant_id, environment_id: sub.environment_id, subscription_id: sub.id, billing_reason: 'AUTO_INVOICE_THRESHOLD' as const,
  invoice_status: { $ne: 'VOIDED' as const }, status: { $ne: 'deleted' as const }, period_start: { $gte: start, $lt: end },
})

/** The end of the last live threshold invoice that starts inside [start, end), or null. */
export async function lastThresholdCut(em: EntityManager, sub: Subscription, start: Date, end: Date): Promise<Date | null> {
  const [last] = await em.find(InvoiceSchema, liveThresholdInvoices(sub, start, end), { orderBy: { period_end: 'desc' }, limit: 1 })
  return last?.period_end ?? null
}

/** Per subscription line item: the sum of the line amounts the live threshold invoices starting inside [start, end) billed. */
export async function thresholdBilledByLine(em: EntityManager, sub: Subscription, start: Date, end: Date): Promise<Map<string, string>> {
  const invoices = await em.find(InvoiceSchema, liveThresholdInvoices(sub, start, end), { fields: ['id'] })
  if (!invoices.length) return new Map()
  const lines = await em.find(InvoiceLineItemSchema, {
    tenant_id: sub.tenant_id, environment_id: sub.environment_id, invoice_id: { $in: invoices.map((i) => i.id) }, status: { $ne: 'deleted' },
  })
  const sums = new Map<string, string>()
  for (const l of lines) {
    if (!l.subscription_line_item_id) continue
    sums.set(l.subscription_line_item_id, toMoneyString(D(sums.get(l.subscription_line_item_id) ?? 0).plus(l.amount), sub.currency))
  }
  return sums
}

/** The charges of an invoice for [start, end) with the threshold cuts applied (reads only). */
export async function applyThresholdCuts(em: EntityManager, sub: Subscription, charges: Charge[], start: Date, end: Date, reason: BillingReason): Promise<Charge[]> {
  // A threshold invoice's own window starts at the last cut by construction (and a recompute
  // must not find the invoice itself as a cut).
  if (reason === 'SUBSCRIPTION_CREATE' || reason === 'AUTO_INVOICE_THRESHOLD' || !charges.some(isArrearUsage)) return chargesAfterCut(charges, reason, null)
  const cut = await lastThresholdCut(em, sub, start, end)
  if (!cut) return chargesAfterCut(charges, reason, null)
  // every reason but the threshold's applies commitments (invoices/charges.ts commitmentsFor)
  return chargesAfterCut(charges, reason, cut, await thresholdBilledByLine(em, sub, start, end), sub.commitment_amount != null)
}
