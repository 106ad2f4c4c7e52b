// Subscription hierarchies (spec: Subscription types, Errors 7 and 8). See README.md "Hierarchies".
// - PARENT: billed as usual; its usage lines pool the usage of its own customer and of every
//   customer inheriting it during the period.
// - INHERITED: a child customer's subscription under a PARENT (same plan, currency and periods).
//   It has no line items and never gets an invoice of its own.
// - DELEGATED_INVOICING: billed as usual, but its invoices are issued to invoicing_customer_id.
// Errors 8 checks lock the customers' rows (FOR UPDATE, in id order), so two concurrent requests
// cannot both pass them for one customer.
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { CustomerSchema, type Customer } from '../customers/customer.entity.js'
import { publishSystemEvent } from '../events/index.js'
import { SubscriptionSchema, type Subscription, type SubscriptionType } from './subscription.entity.js'

export interface InheritanceInput {
  /** customers (service ids) whose inherited subscriptions are created with the parent */
  child_customer_ids?: string[]
  /** the same by the caller's customer identifiers */
  child_external_customer_ids?: string[]
}

export interface HierarchyCreateInput {
  inheritance?: InheritanceInput
  parent_subscription_id?: string
  invoicing_customer_id?: string
}

const live = { status: 'published', subscription_status: { $ne: 'CANCELLED' } } as const
const scopeOf = (s: Subscription): Scope => ({ tenant_id: s.tenant_id, environment_id: s.environment_id })

/** The type a create request asks for; the three hierarchy options exclude each other. */
export function requestedType(input: HierarchyCreateInput): SubscriptionType {
  const given = [input.inheritance, input.parent_subscription_id, input.invoicing_customer_id].filter((x) => x !== undefined)
  if (given.length > 1) {
    throw new ValidationError('inheritance, parent_subscription_id and invoicing_customer_id exclude each other', 'inheritance')
  }
  if (input.inheritance) return 'PARENT'
  if (input.parent_subscription_id) return 'INHERITED'
  if (input.invoicing_customer_id) return 'DELEGATED_INVOICING'
  return 'STANDALONE'
}

/** Serialises hierarchy checks per customer for the rest of the transaction. */
export async function lockCustomers(tx: EntityManager, ids: string[]): Promise<void> {
  const sorted = [...new Set(ids)].sort()
  if (sorted.length) await tx.find(CustomerSchema, { id: { $in: sorted } }, { orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE })
}

/**
 * Errors 8, last rule: a customer holding a live inherited subscription cannot also hold a
 * STANDALONE or PARENT one. DELEGATED_INVOICING is refused too: its usage would be billed twice.
 */
export async function checkMayHoldOwnSubscription(tx: EntityManager, scope: Scope, customerId: string, type: SubscriptionType): Promise<void> {
  await lockCustomers(tx, [customerId])
  const inherited = await tx.findOne(SubscriptionSchema, { ...scope, customer_id: customerId, subscription_type: 'INHERITED', ...live })
  if (inherited) {
    throw new ValidationError(
      `customer ${customerId} already inherits subscription ${inherited.parent_subscription_id} (inherited subscription ${inherited.id}); it cannot also hold a ${type} subscription`,
      'customer_id',
    )
  }
}

/** The invoicing customer of a DELEGATED_INVOICING create: published, and not the subscription's own customer. */
export async function checkInvoicingCustomer(tx: EntityManager, scope: Scope, invoicingCustomerId: string, customerId: string): Promise<void> {
  if (invoicingCustomerId === customerId) throw new ValidationError('invoicing_customer_id must differ from the subscription customer', 'invoicing_customer_id')
  const found = await tx.findOne(CustomerSchema, { id: invoicingCustomerId, ...scope, status: 'published' })
  if (!found) throw new ValidationError(`invoicing customer ${invoicingCustomerId} not found`, 'invoicing_customer_id')
}

/** Published customers by id and by external id, deduplicated; an unknown one is a validation error. */
export async function resolveCustomers(tx: EntityManager, scope: Scope, ids: string[] = [], externalIds: string[] = []): Promise<Customer[]> {
  const byId = ids.length ? await tx.find(CustomerSchema, { id: { $in: ids }, ...scope, status: 'published' }) : []
  const byExternal = externalIds.length ? await tx.find(CustomerSchema, { external_id: { $in: externalIds }, ...scope, status: 'published' }) : []
  const missing = [
    ...ids.filter((id) => !byId.some((c) => c.id === id)),
    ...externalIds.filter((e) => !byExternal.some((c) => c.external_id === e)),
  ]
  if (missing.length) throw new ValidationError(`customers not found: ${missing.join(', ')}`, 'customer_ids')
  return [...new Map([...byId, ...byExternal].map((c) => [c.id, c])).values()]
}

/** Loads a live PARENT subscription for a hierarchy change; row-locked inside a transaction. */
export async function requireParent(em: EntityManager, scope: Scope, id: string): Promise<Subscription> {
  const lock = em.isInTransaction() ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}
  const parent = await em.findOne(SubscriptionSchema, { id, ...scope, status: 'published' }, lock)
  if (!parent) throw new ValidationError(`parent subscription ${id} not found`, 'parent_subscription_id')
  if (parent.subscription_type !== 'PARENT') {
    throw new ValidationError(`subscription ${id} is ${parent.subscription_type}; only PARENT subscriptions have inherited subscriptions`, 'parent_subscription_id')
  }
  if (parent.subscription_status === 'CANCELLED') throw new InvalidOperationError(`parent subscription ${id} is CANCELLED`)
  return parent
}

/**
 * Errors 8: makes each customer inherit `parent`. All customers are checked before anything is
 * written. A customer already inheriting this parent keeps its subscription (idempotent).
 * Returns the customers' inherited subscriptions, existing and new, in the customers' order.
 */
export async function inheritCustomers(tx: EntityManager, userId: string, now: Date, parent: Subscription, customers: Customer[]): Promise<Subscription[]> {
  const scope = scopeOf(parent)
  await lockCustomers(tx, customers.map((c) => c.id))
  const existing = new Map<string, Subscription>()
  for (const customer of customers) {
    if (customer.id === parent.customer_id) {
      throw new ValidationError(`customer ${customer.id} owns parent subscription ${parent.id} and cannot inherit it`, 'customer_ids')
    }
    const held = await tx.find(SubscriptionSchema, { ...scope, customer_id: customer.id, ...live }, { orderBy: { created_at: 'asc', id: 'asc' } })
    for (const s of held) {
      if (s.subscription_type === 'INHERITED' && s.parent_subscription_id === parent.id) existing.set(customer.id, s)
      else if (s.subscription_type === 'INHERITED') {
        throw new ValidationError(`customer ${customer.id} already inherits a different parent subscription ${s.parent_subscription_id}`, 'customer_ids')
      } else if (s.subscription_type === 'PARENT') {
        throw new ValidationError(`customer ${customer.id} has parent subscription ${s.id}; a customer with a PARENT subscription cannot inherit one`, 'customer_ids')
      } else {
        throw new ValidationError(`customer ${customer.id} has ${s.subscription_type} subscription ${s.id}; a customer with its own subscription cannot inherit one`, 'customer_ids')
      }
    }
  }
  return customers.map((c) => existing.get(c.id) ?? createInheritedSubscription(tx, userId, now, parent, c.id))
}

/** A child mirrors its parent's plan and schedule from max(now, parent start); it has no line items. */
function createInheritedSubscription(tx: EntityManager, userId: string, now: Date, parent: Subscription, customerId: string): Subscription {
  const scope = scopeOf(parent)
  const start = parent.start_date > now ? parent.start_date : now
  const trialing = parent.subscription_status === 'TRIALING'
  const child = tx.create(SubscriptionSchema, {
    id: newId('subs'), ...scope, customer_id: customerId, plan_id: parent.plan_id, currency: parent.currency,
    subscription_status: parent.subscription_status, billing_period: parent.billing_period, billing_period_count: parent.billing_period_count,
    billing_cycle: parent.billing_cycle, billing_anchor: parent.billing_anchor, start_date: start, end_date: null,
    current_period_start: parent.current_period_start > start ? parent.current_period_start : start, current_period_end: parent.current_period_end,
    cancel_at: null, cancelled_at: null, cancel_at_period_end: false, status: 'published', metadata: {},
    subscription_type: 'INHERITED', parent_subscription_id: parent.id, invoicing_customer_id: null,
    trial_start: trialing ? start : null, trial_end: trialing ? parent.trial_end : null,
    collection_method: parent.collection_method, payment_behavior: parent.payment_behavior,
    auto_invoice_threshold: null, commitment_amount: null, overage_factor: null, enable_true_up: false,
    synced_price_sequence: parent.synced_price_sequence, cancellation_type: null, lookup_key: null,
    created_by: userId, updated_by: userId,
  })
  publishSystemEvent(tx, scope, {
    event_name: 'subscription.created', entity_type: 'subscription', entity_id: child.id,
    payload: { subscription_id: child.id, customer_id: customerId, plan_id: child.plan_id, subscription_status: child.subscription_status, parent_subscription_id: parent.id },
  })
  return child
}

/** The parent's live inherited subscriptions (row-locked), optionally only those in one status. */
export async function liveInheritedChildren(em: EntityManager, parent: Subscription, status?: Subscription['subscription_status']): Promise<Subscription[]> {
  if (parent.subscription_type !== 'PARENT') return []
  return em.find(
    SubscriptionSchema,
    { ...scopeOf(parent), parent_subscription_id: parent.id, subscription_type: 'INHERITED', ...live, ...(status ? { subscription_status: status } : {}) },
    { orderBy: { created_at: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_WRITE },
  )
}

/** INHERITED subscriptions are billed on their parent's invoice, never on their own. */
export const billsOwnInvoices = (sub: Subscription): boolean => sub.subscription_type !== 'INHERITED'

/** Who an invoice of `sub` is issued to, and whose subscription it bills. */
export function invoiceParties(sub: Subscription): { customer_id: string; subscription_customer_id: string } {
  return { customer_id: sub.invoicing_customer_id ?? sub.customer_id, subscription_customer_id: sub.customer_id }
}

/**
 * External customer ids whose usage `sub` bills for [periodStart, periodEnd): its own customer,
 * and for a PARENT every customer whose inherited subscription overlaps the window. Usage is
 * pooled over the whole window (MAX, LATEST and unique counts cannot be split per customer).
 */
export async function usageCustomerExternalIds(em: EntityManager, sub: Subscription, periodStart: Date, periodEnd: Date): Promise<string[]> {
  const scope = scopeOf(sub)
  const customerIds = [sub.customer_id]
  if (sub.subscription_type === 'PARENT') {
    const children = await em.find(SubscriptionSchema, {
      ...scope, parent_subscription_id: sub.id, subscription_type: 'INHERITED', status: 'published',
      start_date: { $lt: periodEnd }, $or: [{ end_date: null }, { end_date: { $gt: periodStart } }],
    })
    customerIds.push(...children.map((c) => c.customer_id))
  }
  const customers = await em.find(CustomerSchema, { id: { $in: customerIds }, ...scope })
  return [...new Set(customers.map((c) => c.external_id))].sort()
}

/** usageCustomerExternalIds of `sub`, looked up once per window (an invoice asks per line). */
export function usageCustomersByWindow(em: EntityManager, sub: Subscription): (start: Date, end: Date) => Promise<string[]> {
  const pooled = new Map<string, Promise<string[]>>()
  return (start, end) => {
    const window = `${start.getTime()}:${end.getTime()}`
    if (!pooled.has(window)) pooled.set(window, usageCustomerExternalIds(em, sub, start, end))
    return pooled.get(window)!
  }
}

/**
 * A parent's draft activation or incomplete -> active move, applied to its children still in
 * `from` status: they take the parent's status, and with `schedule` its start, anchor, periods
 * and trial (a draft's dates are fixed at activation). No invoices.
 */
export async function followParent(tx: EntityManager, parent: Subscription, from: Subscription['subscription_status'], schedule: boolean): Promise<void> {
  for (const child of await liveInheritedChildren(tx, parent, from)) {
    child.subscription_status = parent.subscription_status
    if (schedule) {
      Object.assign(child, {
        start_date: parent.start_date, billing_anchor: parent.billing_anchor, current_period_start: parent.current_period_start,
        current_period_end: parent.current_period_end, trial_start: parent.trial_start, trial_end: parent.trial_end,
      })
    }
    child.updated_by = parent.updated_by
    publishSystemEvent(tx, scopeOf(child), {
      event_name: 'subscription.updated', entity_type: 'subscription', entity_id: child.id,
      payload: { subscription_id: child.id, customer_id: child.customer_id, plan_id: child.plan_id, subscription_status: child.subscription_status, parent_subscription_id: parent.id },
    })
  }
}
