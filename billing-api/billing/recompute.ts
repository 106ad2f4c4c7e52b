// Recomputation of a DRAFT or SKIPPED subscription invoice from the current usage, prices and
// coupons (spec: "Recomputation of skipped and draft invoices is supported"). One transaction
// locks the invoice, replaces its lines and coupon applications, rewrites its draft amounts and
// sets last_computed_at (which restarts the finalization delay); the version increments.
// A SKIPPED invoice whose new total is above zero becomes DRAFT and publishes invoice.drafted;
// a DRAFT whose new total is zero becomes SKIPPED (no event). Any other status, and invoices
// that are not cycle or create invoices of a subscription, are 400 invalid_operation.
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { CouponApplicationSchema } from '../invoices/amounts.entity.js'
import type { BillingReason } from './charges.js'
import type { Invoice } from '../invoices/invoice.entity.js'
import { lockInvoice, type ChangeOptions, invoiceEventPayload } from '../invoices/index.js'
import { computeSubscriptionInvoice, draftAmounts, isZeroAmount, writeComputedLines } from './subscription-invoice.js'
import { usageAnalyticsForLines } from './usage-analytics.js'
import { keepAdjustments, withAdjustments } from './late-adjustments.js'

/** Billing reasons whose lines the subscription's price list reproduces (not proration or trial invoices). */
const RECOMPUTABLE_REASONS: readonly string[] = ['SUBSCRIPTION_CREATE', 'SUBSCRIPTION_CYCLE']

export async function recomputeInvoice(ctx: BillingContext, em: EntityManager, scope: Scope, id: string, opts: ChangeOptions = {}): Promise<Invoice> {
  return em.transactional(async (tx) => {
    const invoice = await lockInvoice(tx, scope, id, opts)
    if (invoice.invoice_status !== 'DRAFT' && invoice.invoice_status !== 'SKIPPED') {
      throw new InvalidOperationError(`invoice ${id} is ${invoice.invoice_status}; only DRAFT and SKIPPED invoices can be recomputed`)
    }
    if (invoice.invoice_type !== 'SUBSCRIPTION' || !invoice.subscription_id || !invoice.period_start || !invoice.period_end
      || !RECOMPUTABLE_REASONS.includes(invoice.billing_reason)) {
      throw new InvalidOperationError(`invoice ${id} (${invoice.invoice_type}, ${invoice.billing_reason}) is not a subscription cycle or create invoice and cannot be recomputed`)
    }
    const sub = await tx.findOneOrFail(SubscriptionSchema, { id: invoice.subscription_id, ...scope })
    const fresh = await computeSubscriptionInvoice(
      ctx, tx, sub, invoice.period_start, invoice.period_end, invoice.billing_reason as BillingReason, invoice.id,
    )
    await tx.nativeDelete(CouponApplicationSchema, { ...scope, invoice_id: invoice.id })
    // every line but the late-usage adjustments of earlier periods (late-adjustments.ts), which stay in the totals
    const computed = withAdjustments(fresh, await keepAdjustments(tx, scope, invoice))
    const wasSkipped = invoice.invoice_status === 'SKIPPED'
    const zero = isZeroAmount(computed)
    Object.assign(invoice, draftAmounts(computed, invoice.currency))
    invoice.last_computed_at = ctx.clock.now()
    invoice.invoice_status = zero ? 'SKIPPED' : 'DRAFT'
    // A skipped invoice was marked paid (nothing to pay); a draft waits for payment.
    invoice.payment_status = zero ? 'SUCCEEDED' : 'PENDING'
    writeComputedLines(tx, invoice, computed)
    await usageAnalyticsForLines(ctx, tx, invoice) // A2: usage_analytics / usage_breakdown, as at creation
    if (wasSkipped && !zero) {
      publishSystemEvent(tx, scope, { event_name: 'invoice.drafted', entity_type: 'invoice', entity_id: invoice.id, payload: invoiceEventPayload(invoice) })
    }
    await tx.flush()
    return invoice
  })
}
