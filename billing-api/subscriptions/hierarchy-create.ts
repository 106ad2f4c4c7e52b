// POST /subscriptions with parent_subscription_id: the customer inherits that PARENT subscription
// (hierarchy.ts). The child takes the parent's plan, currency and schedule, so plan_id and
// currency are optional and, when given, must be the parent's. Errors 7: no auto_invoice_threshold.
// Inheriting a parent the customer already inherits returns the existing child (idempotent).
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import type { Scope } from '../db/scope.js'
import { inheritCustomers, requireParent, resolveCustomers } from './hierarchy.js'
import type { Subscription, SubscriptionLineItem } from './subscription.entity.js'

export interface InheritedCreateInput {
  customer_id?: string
  external_customer_id?: string
  parent_subscription_id?: string
  plan_id?: string
  currency?: string
  auto_invoice_threshold?: string | null
}

export async function createInheritedSubscription(
  em: EntityManager, scope: Scope, userId: string, clock: Clock, input: InheritedCreateInput,
): Promise<{ subscription: Subscription; lineItems: SubscriptionLineItem[] }> {
  if (input.auto_invoice_threshold !== undefined && input.auto_invoice_threshold !== null) {
    throw new ValidationError('auto_invoice_threshold is not allowed on INHERITED subscriptions', 'auto_invoice_threshold')
  }
  if (!input.customer_id && !input.external_customer_id) throw new ValidationError('customer_id or external_customer_id is required', 'customer_id')
  return em.transactional(async (tx) => {
    const [customer] = await resolveCustomers(tx, scope, input.customer_id ? [input.customer_id] : [], input.customer_id ? [] : [input.external_customer_id!])
    const parent = await requireParent(tx, scope, input.parent_subscription_id!)
    if (input.plan_id !== undefined && input.plan_id !== parent.plan_id) {
      throw new ValidationError(`plan_id must be the parent's plan ${parent.plan_id} (or omitted)`, 'plan_id')
    }
    if (input.currency !== undefined && input.currency.toUpperCase() !== parent.currency) {
      throw new ValidationError(`currency must be the parent's currency ${parent.currency} (or omitted)`, 'currency')
    }
    const [child] = await inheritCustomers(tx, userId, clock.now(), parent, [customer])
    return { subscription: child, lineItems: [] }
  })
}
