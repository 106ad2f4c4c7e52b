// POST /subscriptions/{id}/inherited: adds and removes the inherited subscriptions of a PARENT
// in one transaction (spec: "another operation adds or removes inherited subscriptions of a
// parent"). Adding obeys Errors 8 (hierarchy.ts inheritCustomers) and is idempotent for a
// customer already inheriting this parent. Removing ends the customer's inherited subscription
// now (or at its start, if later), publishing subscription.cancelled; removing a customer whose
// inherited subscription under this parent already ended changes nothing, and one that never
// inherited it is a validation error.
import { InvalidOperationError, ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { inheritCustomers, liveInheritedChildren, resolveCustomers } from './hierarchy.js'
import { eventPayload, getSubscription, lockSubscription } from './service.js'
import { SubscriptionSchema, type Subscription } from './subscription.entity.js'
import { terminateSubscription } from './terminate.js'

export interface InheritedChangeInput {
  add_customer_ids?: string[]
  add_external_customer_ids?: string[]
  remove_customer_ids?: string[]
  remove_external_customer_ids?: string[]
  version?: number
}

export interface InheritedChildren {
  parent: Subscription
  children: Subscription[]
}

export async function changeInheritedSubscriptions(ctx: BillingContext, scope: Scope, userId: string, id: string, input: InheritedChangeInput): Promise<InheritedChildren> {
  const now = ctx.clock.now()
  const lists = [input.add_customer_ids, input.add_external_customer_ids, input.remove_customer_ids, input.remove_external_customer_ids]
  if (!lists.some((l) => l?.length)) throw new ValidationError('give customers to add or to remove', 'add_customer_ids')
  return ctx.orm.em.fork().transactional(async (tx) => {
    const parent = await lockSubscription(tx, scope, id, input.version)
    if (parent.subscription_type !== 'PARENT') {
      throw new ValidationError(`subscription ${id} is ${parent.subscription_type}; only PARENT subscriptions have inherited subscriptions`, 'id')
    }
    if (parent.subscription_status === 'CANCELLED') throw new InvalidOperationError(`subscription ${id} is CANCELLED`)
    const add = await resolveCustomers(tx, scope, input.add_customer_ids, input.add_external_customer_ids)
    const remove = await resolveCustomers(tx, scope, input.remove_customer_ids, input.remove_external_customer_ids)
    const both = add.filter((a) => remove.some((r) => r.id === a.id))
    if (both.length) throw new ValidationError(`customers both added and removed: ${both.map((c) => c.id).join(', ')}`, 'remove_customer_ids')
    await inheritCustomers(tx, userId, now, parent, add)
    for (const customer of remove) {
      const inherited = await tx.find(SubscriptionSchema, {
        ...scope, customer_id: customer.id, parent_subscription_id: parent.id, subscription_type: 'INHERITED', status: 'published',
      })
      const child = inherited.find((s) => s.subscription_status !== 'CANCELLED')
      if (child) {
        child.cancellation_type = 'immediate'
        child.updated_by = userId
        await terminateSubscription(ctx, tx, child, child.start_date > now ? child.start_date : now, now)
      } else if (!inherited.length) {
        throw new ValidationError(`customer ${customer.id} does not inherit subscription ${parent.id}`, 'remove_customer_ids')
      }
    }
    // The parent's hierarchy changed: touching it makes the flush bump its version.
    parent.updated_by = userId
    parent.updated_at = new Date()
    publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: parent.id, payload: eventPayload(parent) })
    await tx.flush()
    return { parent, children: await liveInheritedChildren(tx, parent) }
  })
}

/** Every inherited subscription of a subscription (ended ones too), oldest first; none unless it is a PARENT. */
export async function listInheritedSubscriptions(ctx: BillingContext, scope: Scope, id: string): Promise<InheritedChildren> {
  const em = ctx.orm.em.fork()
  const { subscription: parent } = await getSubscription(em, scope, id)
  const children = parent.subscription_type !== 'PARENT' ? [] : await em.find(
    SubscriptionSchema,
    { ...scope, parent_subscription_id: parent.id, subscription_type: 'INHERITED', status: 'published' },
    { orderBy: { created_at: 'asc', id: 'asc' } },
  )
  return { parent, children }
}
