// The cancel use case (spec: transitions table, Errors 3 and 4).
// - immediate: ends now, or at a past cancel_at (backdating is allowed down to the start of
//   the current period, which is never before start_date; earlier periods are already
//   invoiced). A future cancel_at is refused in favour of scheduled_date. A subscription
//   whose start_date is still ahead ends at its start_date and is billed nothing.
// - scheduled_date: cancel_at strictly in the future; the billing schedule terminates it then.
// - end_of_period: cancel_at = current_period_end (cancel_at_period_end = true); same schedule.
// cancelled_at records when the termination took effect: the request time for an immediate
// cancel, cancel_at for the scheduled ones (a late schedule run does not change it).
import { InvalidOperationError, ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { eventPayload, lockSubscription } from './service.js'
import { SubscriptionLineItemSchema } from './subscription.entity.js'
import { terminateSubscription } from './terminate.js'
import { isCadenceStrategy, normalizeCancellationType, scheduleStrategyCancel } from './cancel-strategies.js'

export interface CancelSubscriptionInput {
  /** a CancellationType or one of its aliases (cancel-strategies.ts normalizes it) */
  cancellation_type: string
  cancel_at?: string
  version?: number
}

export async function cancelSubscription(ctx: BillingContext, scope: Scope, userId: string, id: string, input: CancelSubscriptionInput) {
  const now = ctx.clock.now()
  return ctx.orm.em.fork().transactional(async (tx) => {
    const sub = await lockSubscription(tx, scope, id, input.version)
    if (sub.subscription_status !== 'ACTIVE' && sub.subscription_status !== 'TRIALING') {
      throw new InvalidOperationError(`subscription ${id} is ${sub.subscription_status}; only ACTIVE or TRIALING subscriptions can be cancelled`)
    }
    const at = input.cancel_at !== undefined ? new Date(input.cancel_at) : undefined
    sub.updated_by = userId
    const cancellationType = normalizeCancellationType(input.cancellation_type)
    // minimum_period_end / maximum_period_end: multi-cadence strategies
    if (isCadenceStrategy(cancellationType)) await scheduleStrategyCancel(tx, scope, sub, cancellationType, input.cancel_at, now)
    switch (cancellationType) {
      case 'immediate': {
        if (at && at > now) {
          throw new ValidationError('cancel_at is in the future: an immediate cancellation takes a past or no cancel_at; use cancellation_type scheduled_date to cancel later', 'cancel_at')
        }
        // A subscription that has not started yet ends at its start, owing nothing.
        const end = sub.start_date > now ? sub.start_date : (at ?? now)
        if (end < sub.current_period_start) {
          throw new ValidationError(`cancel_at must not be before the current period start ${sub.current_period_start.toISOString()}`, 'cancel_at')
        }
        sub.cancellation_type = 'immediate'
        sub.cancel_at_period_end = false
        await terminateSubscription(ctx, tx, sub, end, now)
        break
      }
      case 'scheduled_date': {
        if (!at) throw new ValidationError('cancel_at is required with cancellation_type scheduled_date', 'cancel_at')
        if (at <= now) throw new ValidationError('cancel_at must be strictly in the future with cancellation_type scheduled_date', 'cancel_at')
        sub.cancellation_type = 'scheduled_date'
        sub.cancel_at = at
        sub.cancel_at_period_end = false
        publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
        break
      }
      case 'end_of_period': {
        if (at) throw new ValidationError('cancel_at is not accepted with cancellation_type end_of_period', 'cancel_at')
        sub.cancellation_type = 'end_of_period'
        sub.cancel_at = sub.current_period_end
        sub.cancel_at_period_end = true
        publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
        break
      }
    }
    await tx.flush()
    const lineItems = await tx.find(SubscriptionLineItemSchema, { subscription_id: id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
    return { subscription: sub, lineItems }
  })
}
