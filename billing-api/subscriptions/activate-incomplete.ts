// incomplete -> active (spec: transitions), called when the payment provider reports the
// subscription active (the inbound webhook lands with the integrations issue). Idempotent: an
// already active subscription is returned unchanged, so a redelivered webhook changes nothing.
import { InvalidOperationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { followParent } from './hierarchy.js'
import { eventPayload, lockSubscription } from './service.js'
import type { Subscription } from './subscription.entity.js'

export async function activateIncompleteSubscription(ctx: BillingContext, scope: Scope, id: string): Promise<{ subscription: Subscription; changed: boolean }> {
  return ctx.orm.em.fork().transactional(async (tx) => {
    const sub = await lockSubscription(tx, scope, id)
    if (sub.subscription_status === 'ACTIVE') return { subscription: sub, changed: false }
    if (sub.subscription_status !== 'INCOMPLETE') {
      throw new InvalidOperationError(`subscription ${id} is ${sub.subscription_status}; only an INCOMPLETE subscription can be activated by its payment provider`)
    }
    sub.subscription_status = 'ACTIVE'
    sub.updated_by = 'system:payment-provider'
    // Pending invoices are re-synchronised to the provider by the integrations issue's sync job.
    publishSystemEvent(tx, scope, { event_name: 'subscription.activated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
    await followParent(tx, sub, 'INCOMPLETE', false) // hierarchy: INCOMPLETE children become ACTIVE with their parent
    await tx.flush()
    return { subscription: sub, changed: true }
  })
}
