// Ending a subscription at `end` (immediate, scheduled-date and period-end cancellation all
// come here), and the other status moves of the billing schedule. Callers hold the row lock
// (FOR UPDATE) and pass their transaction, so the invoices, the status change and the
// subscription.cancelled event commit together or not at all.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/publish.js'
import { createSubscriptionInvoice } from '../invoices/service.js'
import { createProrationInvoice } from './final-invoice.js'
import { nextBoundary } from './periods.js'
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
  await createSubscriptionInvoice(ctx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CREATE')
  publishSystemEvent(tx, scopeOf(sub), { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
  return 1
}

/**
 * Bills everything owed up to `end` and cancels: complete periods before `end` get their cycle
 * invoice (catching up a late schedule); the period `end` falls in gets a SUBSCRIPTION_CYCLE
 * invoice when `end` is its boundary, else a PRORATION invoice for [period start, end). A
 * trial that has not ended, or a subscription ended at its start, owes nothing.
 * Returns the number of invoices billed.
 */
export async function terminateSubscription(ctx: BillingContext, tx: EntityManager, sub: Subscription, end: Date, cancelledAt: Date): Promise<number> {
  const scope = scopeOf(sub)
  let invoices = 0
  sub.end_date = end
  if (sub.subscription_status === 'TRIALING' && sub.trial_end && end > sub.trial_end) invoices += await startPaidBilling(ctx, tx, sub)
  if (sub.subscription_status === 'ACTIVE' && end > sub.start_date) {
    while (sub.current_period_end < end) {
      await createSubscriptionInvoice(ctx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CYCLE')
      advancePeriod(sub)
      invoices++
    }
    if (end.getTime() === sub.current_period_end.getTime()) {
      await createSubscriptionInvoice(ctx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CYCLE')
    } else {
      await createProrationInvoice(ctx, tx, sub, end)
    }
    invoices++
  }
  sub.subscription_status = 'CANCELLED'
  sub.cancel_at = end
  sub.cancelled_at = cancelledAt
  const lineItems = await tx.find(SubscriptionLineItemSchema, { subscription_id: sub.id, ...scope, status: 'published', end_date: null })
  for (const li of lineItems) li.end_date = end
  publishSystemEvent(tx, scope, {
    event_name: 'subscription.cancelled', entity_type: 'subscription', entity_id: sub.id,
    payload: { ...eventPayload(sub), cancellation_type: sub.cancellation_type, end_date: end.toISOString() },
  })
  return invoices
}
