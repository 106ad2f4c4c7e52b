// Activating a DRAFT subscription (spec: transitions): invoicing starts from the activation's
// start date (default now). The periods are computed again from that date as a create would:
// an anniversary subscription is re-anchored at the new start (or its trial end), except an
// explicit billing_anchor given at creation, which is kept and must not be after the new start;
// a calendar one takes the calendar anchor. A trial keeps its length and moves with the start,
// and its zero-amount trial invoice is created now.
import { InvalidOperationError, ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { PriceSchema } from '../plans/price.entity.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { followParent } from './hierarchy.js'
import { eventPayload, firstPeriod, lockSubscription } from './service.js'
import { SubscriptionLineItemSchema } from './subscription.entity.js'

export interface ActivateSubscriptionInput {
  start_date?: string
  version?: number
}

export async function activateSubscription(ctx: BillingContext, scope: Scope, userId: string, id: string, input: ActivateSubscriptionInput) {
  return ctx.orm.em.fork().transactional(async (tx) => {
    const sub = await lockSubscription(tx, scope, id, input.version)
    if (sub.subscription_status !== 'DRAFT') throw new InvalidOperationError(`subscription ${id} is ${sub.subscription_status}; only a DRAFT subscription can be activated`)
    if (sub.subscription_type === 'INHERITED') throw new InvalidOperationError(`subscription ${id} is INHERITED: it is activated with its parent ${sub.parent_subscription_id}`)
    const start = input.start_date ? new Date(input.start_date) : ctx.clock.now()
    const trialMs = sub.trial_start && sub.trial_end ? sub.trial_end.getTime() - sub.trial_start.getTime() : 0
    const trialEnd = trialMs > 0 ? new Date(start.getTime() + trialMs) : null
    const draftBillingStart = sub.trial_end ?? sub.start_date
    const explicitAnchor = sub.billing_cycle === 'anniversary' && sub.billing_anchor.getTime() !== draftBillingStart.getTime() ? sub.billing_anchor : null
    if (explicitAnchor && explicitAnchor > start) throw new ValidationError('start_date must not be before the billing_anchor', 'start_date')
    Object.assign(sub, firstPeriod({ cycle: sub.billing_cycle, period: sub.billing_period, count: sub.billing_period_count, explicitAnchor, start, trialEnd }))
    sub.start_date = start
    sub.trial_start = trialEnd ? start : null
    sub.trial_end = trialEnd
    sub.subscription_status = trialEnd ? 'TRIALING' : 'ACTIVE'
    sub.updated_by = userId
    const lineItems = await tx.find(SubscriptionLineItemSchema, { subscription_id: id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
    for (const li of lineItems) li.start_date = start
    if (trialEnd) await ctx.subscriptionInvoicing.createTrialInvoice(tx, ctx.clock, sub)
    await followParent(tx, sub, 'DRAFT', true) // hierarchy: DRAFT children start with their parent
    publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
    await ctx.subscriptionInvoicing.invoiceFirstPeriod(ctx, tx, sub, await tx.find(PriceSchema, { id: { $in: lineItems.map((l) => l.price_id) }, ...scope }))
    await tx.flush()
    return { subscription: sub, lineItems }
  })
}
