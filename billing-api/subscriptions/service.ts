// Subscription use cases: create, read, update, list. Cancellation lives in cancel.ts and the
// billing schedule in bill-due.ts.
import type { EntityManager } from '@mikro-orm/postgresql'
import { LockMode } from '@mikro-orm/core'
import { NotFoundError, ValidationError, VersionConflictError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { publishSystemEvent } from '../events/index.js'
import { getPlan } from '../plans/index.js'
import { PlanSchema } from '../plans/plan.entity.js'
import { PriceSchema, type Price } from '../plans/price.entity.js'
import { type BillingPeriod } from '../periods/periods.js'
import { D } from '../pricing/index.js'
import { calendarAnchor, nextBoundary } from '../periods/periods.js'
import { applyOverrideCommitments, checkSubscriptionCommitment, type OverrideLineItemInput } from './commitments.js'
import {
  checkInvoicingCustomer, checkMayHoldOwnSubscription, inheritCustomers, lockCustomers, requestedType, resolveCustomers, type HierarchyCreateInput,
} from './hierarchy.js'
import { createInheritedSubscription } from './hierarchy-create.js'
import {
  SubscriptionLineItemSchema, SubscriptionSchema, type CollectionMethod, type Subscription, type SubscriptionLineItem,
  type SubscriptionStatus, type SubscriptionType,
} from './subscription.entity.js'

const DAY_MS = 86_400_000

export interface CreateSubscriptionInput extends HierarchyCreateInput {
  customer_id?: string
  external_customer_id?: string
  /** optional only with parent_subscription_id (the child takes the parent's) */
  plan_id?: string
  currency?: string
  billing_period?: Exclude<BillingPeriod, 'ONETIME'>
  billing_period_count?: number
  billing_cycle?: 'anniversary' | 'calendar'
  billing_anchor?: string
  start_date?: string
  trial_period_days?: number
  trial_start?: string
  trial_end?: string
  collection_method?: CollectionMethod
  payment_behavior?: string
  auto_invoice_threshold?: string | null
  commitment_amount?: string | null
  overage_factor?: string | null
  enable_true_up?: boolean
  metadata?: Record<string, string>
  lookup_key?: string | null
  draft?: boolean
  /** line item commitments by price (commitments.ts) */
  override_line_items?: OverrideLineItemInput[]
}

export interface UpdateSubscriptionInput {
  metadata?: Record<string, string>
  auto_invoice_threshold?: string | null
  lookup_key?: string | null
  /** optimistic lock: when given it must equal the stored version */
  version?: number
  /** Flexprice's SDK sends it: only the subscription's current value is accepted (cancel at /subscriptions/{id}/cancel) */
  cancel_at_period_end?: boolean
}

/** Plan prices a subscription takes: same currency, same cadence, plus one-time charges. */
export function selectPrices(prices: Price[], currency: string, period: BillingPeriod, count: number): Price[] {
  return prices.filter(
    (p) => p.currency === currency && (p.billing_period === 'ONETIME' || (p.billing_period === period && p.billing_period_count === count)),
  )
}

/** Trial length when the request names none: the plan's recurring fixed prices must agree (0 without any). */
export function planTrialDays(prices: Price[]): number {
  const days = new Set(prices.filter((p) => p.type === 'FIXED' && p.billing_period !== 'ONETIME').map((p) => p.trial_period_days ?? 0))
  if (days.size > 1) {
    throw new ValidationError(`the plan's recurring fixed prices disagree on trial_period_days (${[...days].sort((a, b) => a - b).join(', ')}); pass trial_period_days`, 'trial_period_days')
  }
  return days.size === 1 ? [...days][0] : 0
}

/** Spec Errors 7: a threshold is 0 or more, and only for standalone subscriptions billing usage. */
export function checkAutoInvoiceThreshold(threshold: string | null | undefined, type: SubscriptionType, prices: Pick<Price, 'type'>[]): void {
  if (threshold === undefined || threshold === null) return
  if (D(threshold).isNegative()) throw new ValidationError('auto_invoice_threshold must be 0 or more', 'auto_invoice_threshold')
  if (type !== 'STANDALONE') throw new ValidationError(`auto_invoice_threshold is not allowed on ${type} subscriptions`, 'auto_invoice_threshold')
  if (!prices.some((p) => p.type === 'USAGE')) throw new ValidationError('auto_invoice_threshold needs a usage-based plan (at least one USAGE price)', 'auto_invoice_threshold')
}

export interface TrialWindow {
  trial_start: Date | null
  trial_end: Date | null
}

/** Spec Errors 5 and the trial defaults; a trial with no length is no trial. */
export function resolveTrial(input: Pick<CreateSubscriptionInput, 'trial_period_days' | 'trial_start' | 'trial_end'>, start: Date, prices: Price[]): TrialWindow {
  const explicit = input.trial_start !== undefined || input.trial_end !== undefined
  if (input.trial_period_days !== undefined && explicit) {
    throw new ValidationError('trial_period_days cannot be combined with trial_start or trial_end', 'trial_period_days')
  }
  if (explicit) {
    if (input.trial_end === undefined) throw new ValidationError('trial_start needs trial_end', 'trial_end')
    const trialStart = input.trial_start ? new Date(input.trial_start) : start
    const trialEnd = new Date(input.trial_end)
    if (trialEnd <= trialStart) throw new ValidationError('trial_end must be after trial_start', 'trial_end')
    if (trialStart.getTime() !== start.getTime()) throw new ValidationError('trial_start must equal start_date (a trial begins with the subscription)', 'trial_start')
    return { trial_start: trialStart, trial_end: trialEnd }
  }
  const days = input.trial_period_days ?? planTrialDays(prices)
  if (days === 0) return { trial_start: null, trial_end: null }
  return { trial_start: start, trial_end: new Date(start.getTime() + days * DAY_MS) }
}

/**
 * The anchor and the current period of a subscription starting at `start`. During a trial the
 * current period is the trial window, and paid billing starts at trial_end: an anniversary
 * subscription without an explicit anchor is anchored there.
 */
export function firstPeriod(o: {
  cycle: 'anniversary' | 'calendar'; period: BillingPeriod; count: number; explicitAnchor: Date | null; start: Date; trialEnd: Date | null
}): { billing_anchor: Date; current_period_start: Date; current_period_end: Date } {
  const billingStart = o.trialEnd ?? o.start
  const anchor = o.cycle === 'calendar' ? calendarAnchor(billingStart, o.period) : (o.explicitAnchor ?? billingStart)
  if (o.trialEnd) return { billing_anchor: anchor, current_period_start: o.start, current_period_end: o.trialEnd }
  return { billing_anchor: anchor, current_period_start: o.start, current_period_end: nextBoundary(anchor, o.period, o.count, o.start) }
}

export interface CreatedSubscription {
  subscription: Subscription
  lineItems: SubscriptionLineItem[]
}

export async function createSubscription(ctx: BillingContext, em: EntityManager, scope: Scope, userId: string, input: CreateSubscriptionInput): Promise<CreatedSubscription> {
  const clock = ctx.clock
  const cycle = input.billing_cycle ?? 'anniversary'
  if (input.billing_anchor !== undefined && cycle !== 'anniversary') {
    throw new ValidationError('billing_anchor is only accepted with billing_cycle anniversary', 'billing_anchor')
  }
  checkSubscriptionCommitment(input)
  // hierarchy (hierarchy.ts): the requested type; an INHERITED child is created from its parent
  const type = requestedType(input)
  if (type === 'INHERITED') return createInheritedSubscription(em, scope, userId, clock, input)
  const { plan_id: planId, currency: requestedCurrency } = input
  if (planId === undefined) throw new ValidationError('plan_id is required unless the subscription inherits its parent\'s plan', 'plan_id')
  if (requestedCurrency === undefined) throw new ValidationError('currency is required unless the subscription inherits its parent\'s plan', 'currency')
  return em.transactional(async (tx) => {
    const customer = input.customer_id
      ? await tx.findOne(CustomerSchema, { id: input.customer_id, ...scope, status: 'published' })
      : input.external_customer_id
        ? await tx.findOne(CustomerSchema, { external_id: input.external_customer_id, ...scope, status: 'published' })
        : null
    if (!input.customer_id && !input.external_customer_id) throw new ValidationError('customer_id or external_customer_id is required', 'customer_id')
    if (!customer) throw new NotFoundError('customer', input.customer_id ?? input.external_customer_id)
    // hierarchy: Errors 8 for the customer, the invoicing customer, the PARENT's children (all before any write);
    // every customer involved is row-locked at once, in id order, so concurrent creates cannot deadlock
    const children = input.inheritance ? await resolveCustomers(tx, scope, input.inheritance.child_customer_ids, input.inheritance.child_external_customer_ids) : []
    await lockCustomers(tx, [customer.id, ...children.map((c) => c.id)])
    await checkMayHoldOwnSubscription(tx, scope, customer.id, type)
    if (input.invoicing_customer_id) await checkInvoicingCustomer(tx, scope, input.invoicing_customer_id, customer.id)
    const { plan, prices } = await getPlan(tx, scope, planId).catch((err) => {
      if (err instanceof NotFoundError) throw new ValidationError(`plan ${planId} not found`, 'plan_id')
      throw err
    })
    if (plan.status !== 'published') throw new ValidationError(`plan ${plan.id} is ${plan.status} and takes no new subscriptions`, 'plan_id')
    const currency = requestedCurrency.toUpperCase()
    const period = input.billing_period ?? 'MONTHLY'
    const count = input.billing_period_count ?? 1
    const chosen = selectPrices(prices, currency, period, count)
    if (chosen.length === 0) {
      throw new ValidationError(`plan ${plan.id} has no ${currency} prices billed every ${count} ${period}`, 'currency')
    }
    // An explicit trial_start without start_date starts the subscription with its trial.
    const start = new Date(input.start_date ?? input.trial_start ?? clock.now())
    // An explicit anchor fixes the period boundaries; it must not be after the start, so the
    // first period is the anchor's period that contains start_date (no stub period).
    const explicitAnchor = input.billing_anchor ? new Date(input.billing_anchor) : null
    if (explicitAnchor && explicitAnchor > start) throw new ValidationError('billing_anchor must not be after start_date', 'billing_anchor')
    const trial = resolveTrial(input, start, chosen)
    const periods = firstPeriod({ cycle, period, count, explicitAnchor, start, trialEnd: trial.trial_end })
    checkAutoInvoiceThreshold(input.auto_invoice_threshold, type, chosen)
    // payment_behavior default_incomplete: an automatically charged subscription waits, INCOMPLETE,
    // until the payment provider reports it active (activateIncompleteSubscription).
    const awaitsPayment = input.payment_behavior === 'default_incomplete' && (input.collection_method ?? 'charge_automatically') === 'charge_automatically'
    const subscriptionStatus: SubscriptionStatus = input.draft ? 'DRAFT' : trial.trial_end ? 'TRIALING' : awaitsPayment ? 'INCOMPLETE' : 'ACTIVE'
    const sub = tx.create(SubscriptionSchema, {
      id: newId('subs'), ...scope, customer_id: customer.id, plan_id: plan.id, currency, subscription_status: subscriptionStatus,
      billing_period: period, billing_period_count: count, billing_cycle: cycle, start_date: start, end_date: null, ...periods,
      cancel_at: null, cancelled_at: null, cancel_at_period_end: false, status: 'published', metadata: input.metadata ?? {},
      subscription_type: type, parent_subscription_id: null, invoicing_customer_id: input.invoicing_customer_id ?? null,
      trial_start: trial.trial_start, trial_end: trial.trial_end,
      collection_method: input.collection_method ?? 'charge_automatically', payment_behavior: input.payment_behavior ?? 'default_active',
      auto_invoice_threshold: input.auto_invoice_threshold ?? null, commitment_amount: input.commitment_amount ?? null,
      overage_factor: input.overage_factor ?? null, enable_true_up: input.enable_true_up ?? false,
      synced_price_sequence: plan.max_price_sequence, cancellation_type: null, lookup_key: input.lookup_key ?? null,
      created_by: userId, updated_by: userId,
    })
    const lineItems = chosen.map((price) =>
      tx.create(SubscriptionLineItemSchema, {
        id: newId('subs_line'), ...scope, subscription_id: sub.id, customer_id: customer.id, price_id: price.id,
        meter_id: price.meter_id, currency, display_name: price.display_name ?? plan.name, quantity: '1', start_date: start,
        end_date: null, status: 'published', metadata: {}, created_by: userId, updated_by: userId,
      }),
    )
    await applyOverrideCommitments(tx, scope, lineItems, chosen, input.override_line_items)
    // A trial on a finalized (non-draft) subscription gets its zero-amount invoice in the same commit.
    if (subscriptionStatus === 'TRIALING') await ctx.subscriptionInvoicing.createTrialInvoice(tx, clock, sub)
    publishSystemEvent(tx, scope, { event_name: 'subscription.created', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
    await ctx.subscriptionInvoicing.invoiceFirstPeriod(ctx, tx, sub, chosen)
    // children created with their parent start with it (a backdated start too: credit grant catch-up applies to them)
    if (type === 'PARENT') await inheritCustomers(tx, userId, start, sub, children)
    return { subscription: sub, lineItems }
  })
}

export function eventPayload(s: Subscription): Record<string, unknown> {
  return { subscription_id: s.id, customer_id: s.customer_id, plan_id: s.plan_id, subscription_status: s.subscription_status }
}

export async function getSubscription(em: EntityManager, scope: Scope, id: string): Promise<{ subscription: Subscription; lineItems: SubscriptionLineItem[] }> {
  const subscription = await em.findOne(SubscriptionSchema, { id, ...scope, status: { $ne: 'deleted' } })
  if (!subscription) throw new NotFoundError('subscription', id)
  const lineItems = await em.find(SubscriptionLineItemSchema, { subscription_id: id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
  return { subscription, lineItems }
}

/** The v2 read: true when the plan has prices newer than the ones this subscription took. */
export async function planPricesOutOfSync(em: EntityManager, scope: Scope, sub: Subscription): Promise<boolean> {
  const plan = await em.findOneOrFail(PlanSchema, { id: sub.plan_id, ...scope })
  return sub.synced_price_sequence < plan.max_price_sequence
}

/** Loads a subscription for a change: row-locked, and checked against the caller's version. */
export async function lockSubscription(tx: EntityManager, scope: Scope, id: string, version?: number): Promise<Subscription> {
  const sub = await tx.findOne(SubscriptionSchema, { id, ...scope, status: { $ne: 'deleted' } }, { lockMode: LockMode.PESSIMISTIC_WRITE })
  if (!sub) throw new NotFoundError('subscription', id)
  if (version !== undefined && version !== sub.version) {
    throw new VersionConflictError(`subscription ${id} is at version ${sub.version}, not ${version}; reload and retry`)
  }
  return sub
}

export async function updateSubscription(em: EntityManager, scope: Scope, userId: string, id: string, input: UpdateSubscriptionInput) {
  return em.transactional(async (tx) => {
    const sub = await lockSubscription(tx, scope, id, input.version)
    if (input.cancel_at_period_end !== undefined && input.cancel_at_period_end !== sub.cancel_at_period_end) {
      const why = input.cancel_at_period_end ? 'cancel through POST /subscriptions/{id}/cancel' : 'a scheduled cancellation is not undone'
      throw new ValidationError(`cancel_at_period_end: ${why}`, 'cancel_at_period_end')
    }
    const lineItems = await tx.find(SubscriptionLineItemSchema, { subscription_id: id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
    if (input.auto_invoice_threshold !== undefined) {
      const prices = await tx.find(PriceSchema, { id: { $in: lineItems.map((l) => l.price_id) }, ...scope })
      checkAutoInvoiceThreshold(input.auto_invoice_threshold, sub.subscription_type, prices)
      sub.auto_invoice_threshold = input.auto_invoice_threshold
    }
    if (input.metadata !== undefined) sub.metadata = input.metadata
    if (input.lookup_key !== undefined) sub.lookup_key = input.lookup_key
    sub.updated_by = userId
    publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
    await tx.flush()
    return { subscription: sub, lineItems }
  })
}

export interface ListSubscriptionsFilter {
  subscription_status?: SubscriptionStatus[]
  subscription_type?: SubscriptionType[]
  customer_id?: string
  plan_id?: string
  limit: number
  offset: number
}

export async function listSubscriptions(em: EntityManager, scope: Scope, q: ListSubscriptionsFilter): Promise<[Subscription[], number]> {
  const where: Record<string, unknown> = { ...scope, status: 'published' }
  if (q.subscription_status?.length) where.subscription_status = { $in: q.subscription_status }
  if (q.subscription_type?.length) where.subscription_type = { $in: q.subscription_type }
  if (q.customer_id) where.customer_id = q.customer_id
  if (q.plan_id) where.plan_id = q.plan_id
  return em.findAndCount(SubscriptionSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
}
