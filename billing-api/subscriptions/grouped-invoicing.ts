// Modification change types grouped_invoicing_add and grouped_invoicing_remove (spec: "Other
// operations", subscription modification). A subscription joins an invoice group: from then on
// its invoices are issued to the group's customer (it becomes DELEGATED_INVOICING), while it
// keeps its own line items, periods and invoices (subscription_customer_id stays its customer).
// - add: exactly one of parent_subscription_id (a live PARENT: the group is the parent's customer,
//   and parent_subscription_id records the group) or invoicing_customer_id (any other published
//   customer). Refused for PARENT and INHERITED subscriptions (a parent is its own group; a child
//   is already billed on its parent's invoice) and, Errors 7, while auto_invoice_threshold is set.
//   Adding to the group it is already in changes nothing; adding to another one moves it.
// - remove: a DELEGATED_INVOICING subscription becomes STANDALONE again; on a STANDALONE one it
//   changes nothing (a repeat is harmless).
// Both take effect at once, for every invoice created afterwards (invoices already written keep
// their customer); no proration, so the preview's invoice_preview is null.
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, NotFoundError, ValidationError, VersionConflictError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { publishSystemEvent } from '../events/index.js'
import { requireParent } from './hierarchy.js'
import { eventPayload, lockSubscription } from './service.js'
import { SubscriptionLineItemSchema, SubscriptionSchema, type Subscription, type SubscriptionLineItem, type SubscriptionType } from './subscription.entity.js'

export const GROUPED_INVOICING_CHANGE_TYPES = ['grouped_invoicing_add', 'grouped_invoicing_remove'] as const
export type GroupedInvoicingChangeType = (typeof GROUPED_INVOICING_CHANGE_TYPES)[number]

/** Body properties of the modify routes that only grouped invoicing changes take. */
export const groupedInvoicingBodyProperties = {
  parent_subscription_id: { type: 'string', minLength: 1, maxLength: 100 },
  invoicing_customer_id: { type: 'string', minLength: 1, maxLength: 100 },
} as const

export interface GroupedInvoicingInput {
  change_type: GroupedInvoicingChangeType
  parent_subscription_id?: string
  invoicing_customer_id?: string
  version?: number
  [other: string]: unknown
}

export const isGroupedInvoicingChange = (body: { change_type: string }): body is GroupedInvoicingInput =>
  (GROUPED_INVOICING_CHANGE_TYPES as readonly string[]).includes(body.change_type)

interface Grouping {
  subscription_type: SubscriptionType
  invoicing_customer_id: string | null
  parent_subscription_id: string | null
}

export interface GroupedInvoicingPlan {
  subscription: Subscription
  changeType: GroupedInvoicingChangeType
  before: Grouping
  after: Grouping
  changed: boolean
}

const OWN_FIELDS = ['change_type', 'parent_subscription_id', 'invoicing_customer_id', 'version']

/** Reads only: validates the change and returns the grouping before and after it. */
export async function planGroupedInvoicing(em: EntityManager, scope: Scope, sub: Subscription, input: GroupedInvoicingInput): Promise<GroupedInvoicingPlan> {
  const extra = Object.keys(input).filter((k) => !OWN_FIELDS.includes(k))
  if (extra.length) throw new ValidationError(`${extra.join(', ')} not accepted with ${input.change_type}`, extra[0])
  if (sub.subscription_status === 'CANCELLED') throw new InvalidOperationError(`subscription ${sub.id} is CANCELLED`)
  const before: Grouping = { subscription_type: sub.subscription_type, invoicing_customer_id: sub.invoicing_customer_id, parent_subscription_id: sub.parent_subscription_id }
  const plan = (after: Grouping): GroupedInvoicingPlan => ({
    subscription: sub, changeType: input.change_type, before, after,
    changed: after.subscription_type !== before.subscription_type || after.invoicing_customer_id !== before.invoicing_customer_id
      || after.parent_subscription_id !== before.parent_subscription_id,
  })
  if (sub.subscription_type === 'PARENT' || sub.subscription_type === 'INHERITED') {
    throw new ValidationError(`subscription ${sub.id} is ${sub.subscription_type}; only STANDALONE or DELEGATED_INVOICING subscriptions join or leave an invoice group`, 'change_type')
  }
  if (input.change_type === 'grouped_invoicing_remove') {
    if (input.parent_subscription_id !== undefined || input.invoicing_customer_id !== undefined) {
      throw new ValidationError('grouped_invoicing_remove takes neither parent_subscription_id nor invoicing_customer_id', 'change_type')
    }
    return plan({ subscription_type: 'STANDALONE', invoicing_customer_id: null, parent_subscription_id: null })
  }
  if ((input.parent_subscription_id === undefined) === (input.invoicing_customer_id === undefined)) {
    throw new ValidationError('grouped_invoicing_add takes exactly one of parent_subscription_id and invoicing_customer_id', 'parent_subscription_id')
  }
  if (sub.auto_invoice_threshold !== null) {
    throw new ValidationError('auto_invoice_threshold is not allowed on DELEGATED_INVOICING subscriptions; clear it before joining an invoice group', 'auto_invoice_threshold')
  }
  let target: Grouping
  if (input.parent_subscription_id !== undefined) {
    const parent = await requireParent(em, scope, input.parent_subscription_id)
    target = { subscription_type: 'DELEGATED_INVOICING', invoicing_customer_id: parent.customer_id, parent_subscription_id: parent.id }
  } else {
    const customer = await em.findOne(CustomerSchema, { id: input.invoicing_customer_id!, ...scope, status: 'published' })
    if (!customer) throw new ValidationError(`invoicing customer ${input.invoicing_customer_id} not found`, 'invoicing_customer_id')
    target = { subscription_type: 'DELEGATED_INVOICING', invoicing_customer_id: customer.id, parent_subscription_id: null }
  }
  if (target.invoicing_customer_id === sub.customer_id) {
    throw new ValidationError(`the invoice group's customer ${sub.customer_id} is the subscription's own customer`, 'invoicing_customer_id')
  }
  return plan(target)
}

export async function previewGroupedInvoicing(ctx: BillingContext, scope: Scope, id: string, input: GroupedInvoicingInput) {
  const em = ctx.orm.em.fork()
  const sub = await em.findOne(SubscriptionSchema, { id, ...scope, status: { $ne: 'deleted' } })
  if (!sub) throw new NotFoundError('subscription', id)
  if (input.version !== undefined && input.version !== sub.version) {
    throw new VersionConflictError(`subscription ${id} is at version ${sub.version}, not ${input.version}; reload and retry`)
  }
  return serializeGroupedInvoicingPlan(await planGroupedInvoicing(em, scope, sub, input), ctx.clock.now())
}

export async function applyGroupedInvoicing(
  ctx: BillingContext, scope: Scope, userId: string, id: string, input: GroupedInvoicingInput,
): Promise<{ subscription: Subscription; lineItems: SubscriptionLineItem[]; invoice: null }> {
  return ctx.orm.em.fork().transactional(async (tx) => {
    const sub = await lockSubscription(tx, scope, id, input.version)
    const plan = await planGroupedInvoicing(tx, scope, sub, input)
    if (plan.changed) {
      Object.assign(sub, plan.after)
      sub.updated_by = userId
      publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: { ...eventPayload(sub), ...plan.after } })
      await tx.flush()
    }
    const lineItems = await tx.find(SubscriptionLineItemSchema, { subscription_id: id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
    return { subscription: sub, lineItems, invoice: null }
  })
}

export function serializeGroupedInvoicingPlan(p: GroupedInvoicingPlan, now: Date) {
  return {
    subscription_id: p.subscription.id, change_type: p.changeType, effective_date: now.toISOString(), changed: p.changed,
    before: p.before, after: p.after, invoice_preview: null,
  }
}
