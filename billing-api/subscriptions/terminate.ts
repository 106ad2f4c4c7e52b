// Ending a subscription at `end` (immediate, scheduled-date and period-end cancellation all
// come here), and the other status moves of the billing schedule. Callers hold the row lock
// (FOR UPDATE) and pass their transaction, so the invoices, the status change and the
// subscription.cancelled event commit together or not at all.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { InvoiceSchema, type Invoice } from '../invoices/invoice.entity.js'
import { createManualInvoice, manualInvoiceKey, invoiceEventPayload, findLiveInvoice } from '../invoices/index.js'
import { D, toMoneyString } from '../pricing/index.js'
import { nextBoundary } from '../periods/periods.js'
import { billsOwnInvoices, liveInheritedChildren } from './hierarchy.js'
import { eventPayload } from './service.js'
import { SubscriptionLineItemSchema, type Subscription } from './subscription.entity.js'
const scopeOf = (s: Subscription): Scope => ({ tenant_id: s.tenant_id, environment_id: s.environment_id })

/** Moves the subscription to its next billing period. */
export function advancePeriod(sub: Subscription): void {
  sub.current_period_start = sub.current_period_end
  sub.current_period_end = nextBoundary(sub.billing_anchor, sub.billing_period, sub.billing_period_count, sub.current_period_start)
}

/**
 * The trial is over: paid billing starts at trial_end, on the anchor's periods, and the first
 * paid period's advance charges are invoiced now (SUBSCRIPTION_CREATE; SKIPPED when there are
 * none). Returns the number of invoices billed.
 */
export async function startPaidBilling(ctx: BillingContext, tx: EntityManager, sub: Subscription): Promise<number> {
  const from = sub.trial_end ?? sub.current_period_end
  sub.subscription_status = 'ACTIVE'
  sub.current_period_start = from
  sub.current_period_end = nextBoundary(sub.billing_anchor, sub.billing_period, sub.billing_period_count, from)
  const own = billsOwnInvoices(sub)
  if (own) await ctx.subscriptionInvoicing.createSubscriptionInvoice(ctx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CREATE')
  publishSystemEvent(tx, scopeOf(sub), { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
  // hierarchy (hierarchy.ts): a parent's trial end ends its inherited children's trials
  for (const child of await liveInheritedChildren(tx, sub, 'TRIALING')) await startPaidBilling(ctx, tx, child)
  return own ? 1 : 0
}

/**
 * A subscription ended at its start never has the first period its SUBSCRIPTION_CREATE invoice
 * billed in advance (first-invoice.ts): that invoice is VOIDED (invoice.voided published) while
 * it is a DRAFT or FINALIZED and unpaid. A paid one (SUCCEEDED or OVERPAID) stays as it is and
 * the customer gets a CREDIT invoice for its amount_paid (creditPaidFirstInvoice).
 */
async function voidFirstPeriodInvoice(ctx: BillingContext, tx: EntityManager, sub: Subscription): Promise<void> {
  const scope = scopeOf(sub)
  const invoices = await tx.find(InvoiceSchema, {
    ...scope, subscription_id: sub.id, billing_reason: 'SUBSCRIPTION_CREATE', invoice_status: { $in: ['DRAFT', 'FINALIZED'] }, status: { $ne: 'deleted' },
  }, { orderBy: { created_at: 'asc', id: 'asc' } })
  for (const invoice of invoices) {
    if (invoice.payment_status === 'SUCCEEDED' || invoice.payment_status === 'OVERPAID') {
      await creditPaidFirstInvoice(ctx, tx, sub, invoice)
      continue
    }
    invoice.invoice_status = 'VOIDED'
    invoice.voided_at = ctx.clock.now()
    publishSystemEvent(tx, scope, { event_name: 'invoice.voided', entity_type: 'invoice', entity_id: invoice.id, payload: invoiceEventPayload(invoice) })
  }
}

/** The idempotency key of the CREDIT invoice giving back a paid invoice (stored as manualInvoiceKey(key)). */
export const creditOfKey = (invoiceId: string): string => `credit_of:${invoiceId}`

/**
 * A paid first-period invoice of a subscription ended at its start: a DRAFT CREDIT invoice
 * (manual-invoices.ts) to the same customer for what was paid (amount_paid), in the cancelling
 * transaction, with metadata.credited_invoice_id = the paid invoice. Once per paid invoice: the
 * key creditOfKey(invoice id); a live one already there is left alone.
 */
async function creditPaidFirstInvoice(ctx: BillingContext, tx: EntityManager, sub: Subscription, paid: Invoice): Promise<void> {
  const scope = scopeOf(sub)
  if (!D(paid.amount_paid).gt(0)) return
  const key = creditOfKey(paid.id)
  const live = await findLiveInvoice(tx, scope, manualInvoiceKey(key))
  if (live) return
  await createManualInvoice(tx, ctx.clock, scope, null, {
    customer_id: paid.customer_id, invoice_type: 'CREDIT', currency: paid.currency, idempotency_key: key,
    description: `Credit for ${paid.invoice_number ?? paid.id}: subscription ${sub.id} ended at its start`,
    metadata: { credited_invoice_id: paid.id, subscription_id: sub.id, reason: 'subscription_ended_at_start' },
    line_items: [{ display_name: `Refund of ${paid.invoice_number ?? paid.id}`, amount: toMoneyString(paid.amount_paid, paid.currency) }],
  })
}

/**
 * Bills everything owed up to `end` and cancels: complete periods before `end` get their cycle
 * invoice (catching up a late schedule); the period `end` falls in gets a SUBSCRIPTION_CYCLE
 * invoice when `end` is its boundary, else a PRORATION invoice for [period start, end). A
 * trial that has not ended, or a subscription ended at its start, owes nothing (the latter's
 * SUBSCRIPTION_CREATE invoice is voided).
 * Returns the number of invoices billed.
 */
export async function terminateSubscription(ctx: BillingContext, tx: EntityManager, sub: Subscription, end: Date, cancelledAt: Date): Promise<number> {
  const scope = scopeOf(sub)
  let invoices = 0
  sub.end_date = end
  if (sub.subscription_status === 'TRIALING' && sub.trial_end && end > sub.trial_end) invoices += await startPaidBilling(ctx, tx, sub)
  if (sub.subscription_status === 'ACTIVE' && end > sub.start_date && billsOwnInvoices(sub)) {
    while (sub.current_period_end < end) {
      await ctx.subscriptionInvoicing.createSubscriptionInvoice(ctx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CYCLE')
      advancePeriod(sub)
      invoices++
    }
    if (end.getTime() === sub.current_period_end.getTime()) {
      await ctx.subscriptionInvoicing.createSubscriptionInvoice(ctx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CYCLE')
    } else {
      await ctx.subscriptionInvoicing.createProrationInvoice(ctx, tx, sub, end)
    }
    invoices++
  }
  if (end <= sub.start_date) await voidFirstPeriodInvoice(ctx, tx, sub)
  sub.subscription_status = 'CANCELLED'
  sub.cancel_at = end
  sub.cancelled_at = cancelledAt
  const lineItems = await tx.find(SubscriptionLineItemSchema, { subscription_id: sub.id, ...scope, status: 'published', end_date: null })
  for (const li of lineItems) li.end_date = end
  publishSystemEvent(tx, scope, {
    event_name: 'subscription.cancelled', entity_type: 'subscription', entity_id: sub.id,
    payload: { ...eventPayload(sub), cancellation_type: sub.cancellation_type, end_date: end.toISOString() },
  })
  // hierarchy (hierarchy.ts): a parent's end ends its inherited children, each with its own event
  for (const child of await liveInheritedChildren(tx, sub)) {
    child.cancellation_type = sub.cancellation_type
    await terminateSubscription(ctx, tx, child, end < child.start_date ? child.start_date : end, cancelledAt)
  }
  return invoices
}
