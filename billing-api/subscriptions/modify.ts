// Subscription modification (spec: POST /subscriptions/{id}/modify/preview): quantity changes,
// added and removed line items.
// The preview and the apply share one plan, so the applied PRORATION invoice carries exactly
// the preview's lines. Rules:
// - only ACTIVE and TRIALING subscriptions; effective_date (default now) within the current
//   period [current_period_start, current_period_end) and not before the line item's start;
// - FIXED recurring prices billed in ADVANCE get a credit for the unused part of the old
//   quantity and a debit for the new quantity, both for [effective_date, current_period_end);
//   ARREAR prices bill the whole period at its end with the line item then current (the new
//   quantity), so they get no proration lines; during a trial nothing was billed, so neither;
//   USAGE prices are measured, not counted: a quantity change of one is refused;
// - apply archives the old line item with end_date = effective_date (so no later invoice bills
//   it) and creates its successor (same price, new quantity) from effective_date. A repeat of
//   an applied change (same line item, quantity and effective minute) returns the same result;
// - add_line_item takes a published price of the subscription's plan or of a published add-on,
//   in its currency and billing period, not already current on it: a debit for the rest of the
//   period when billed in advance; remove_line_item archives a line item at effective_date with
//   a credit for the rest of the period when billed in advance. Same idempotency.
import type { EntityManager } from '@mikro-orm/postgresql'
import { AddonSchema } from '../addons/addon.entity.js'
import { InvalidOperationError, NotFoundError, ValidationError, VersionConflictError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { InvoiceLineItemSchema, type Invoice, type InvoiceLineItem } from '../invoices/invoice.entity.js'
import { invoiceIdempotencyKey, findLiveInvoice } from '../invoices/index.js'
import { toPriceDefinition } from '../plans/index.js'
import { PriceSchema, type Price } from '../plans/price.entity.js'
import { calculateAmount, D, toMoneyString } from '../pricing/index.js'
import { minuteKey } from '../periods/periods.js'
import { prorateQuantityChange } from '../periods/proration.js'
import { eventPayload, lockSubscription } from './service.js'
import { SubscriptionLineItemSchema, SubscriptionSchema, type Subscription, type SubscriptionLineItem } from './subscription.entity.js'
export const PRORATION_BEHAVIORS = ['create_prorations', 'none'] as const

export const CHANGE_TYPES = ['quantity_change', 'add_line_item', 'remove_line_item'] as const
export type ChangeType = (typeof CHANGE_TYPES)[number]

export interface ModificationInput {
  change_type: ChangeType
  /** quantity_change and remove_line_item */
  line_item_id?: string
  /** add_line_item */
  price_id?: string
  /** quantity_change (required) and add_line_item (FIXED prices; default 1) */
  quantity?: string
  effective_date?: string
  proration_behavior?: (typeof PRORATION_BEHAVIORS)[number]
  version?: number
}

export interface ModificationLine {
  /** the credit's is the old line item; the debit's is the new one, unknown (null) before the apply */
  subscription_line_item_id: string | null
  price_id: string
  display_name: string | null
  quantity: string
  amount: string
  period_start: Date
  period_end: Date
}

export interface ModificationPlan {
  changeType: ChangeType
  subscription: Subscription
  /** the line item ended by the change (none when one is added) */
  lineItem: SubscriptionLineItem | null
  price: Price
  /** the quantity from effective_date on (none when a line item is removed) */
  quantity: string | null
  effective: Date
  prorationBehavior: (typeof PRORATION_BEHAVIORS)[number]
  lines: ModificationLine[]
  total: string
  /** the PRORATION invoice's key: subscription, change, line item or price, quantity and effective minute */
  idempotencyKey: string
}

const normalized = (q: string): string => D(q).toString()

function idempotencyKey(sub: Subscription, changeType: ChangeType, target: string, quantity: string | null, effective: Date): string {
  const base = invoiceIdempotencyKey(sub.id, 'PRORATION', effective, sub.current_period_end)
  // quantity changes keep the shorter key form
  if (changeType === 'quantity_change') return `${base}:${target}:${normalized(quantity!)}`
  return `${base}:${changeType}:${target}:${quantity === null ? '-' : normalized(quantity)}`
}

export const periodAmount = (price: Price, quantity: string, currency: string) => toMoneyString(calculateAmount(toPriceDefinition(price), quantity).amount, currency)

/** Whether a change of this price is prorated: recurring FIXED billed in advance, on a paid (not trialing) period. */
export const prorates = (sub: Subscription, price: Price, behavior: (typeof PRORATION_BEHAVIORS)[number]) =>
  behavior === 'create_prorations' && price.type === 'FIXED' && price.invoice_cadence === 'ADVANCE' && price.billing_period !== 'ONETIME'
  && sub.subscription_status === 'ACTIVE'

export function checkModifiable(sub: Subscription, now: Date, input: ModificationInput): Date {
  if (sub.subscription_status !== 'ACTIVE' && sub.subscription_status !== 'TRIALING') {
    throw new InvalidOperationError(`subscription ${sub.id} is ${sub.subscription_status}; only ACTIVE or TRIALING subscriptions can be modified`)
  }
  // hierarchy (hierarchy.ts): a child's charges are its parent's; it has no line items of its own
  if (sub.subscription_type === 'INHERITED') {
    throw new ValidationError(`subscription ${sub.id} is INHERITED: it is billed on parent subscription ${sub.parent_subscription_id}; modify the parent`, 'change_type')
  }
  const effective = input.effective_date !== undefined ? new Date(input.effective_date) : now
  const { current_period_start: start, current_period_end: end } = sub
  if (effective < start || effective >= end) {
    throw new ValidationError(`effective_date must lie within the current period [${start.toISOString()}, ${end.toISOString()})`, 'effective_date')
  }
  return effective
}

async function currentLineItem(em: EntityManager, scope: Scope, sub: Subscription, id: string | undefined, effective: Date): Promise<SubscriptionLineItem> {
  if (!id) throw new ValidationError('line_item_id is required', 'line_item_id')
  const lineItem = await em.findOne(SubscriptionLineItemSchema, { id, subscription_id: sub.id, ...scope, status: 'published' })
  if (!lineItem) throw new ValidationError(`line item ${id} is not a current line item of subscription ${sub.id}`, 'line_item_id')
  if (effective < lineItem.start_date) throw new ValidationError(`effective_date must not be before the line item's start ${lineItem.start_date.toISOString()}`, 'effective_date')
  if (lineItem.end_date && lineItem.end_date <= effective) throw new ValidationError(`line item ${lineItem.id} ends before effective_date`, 'line_item_id')
  return lineItem
}

function modificationLine(price: Price, lineItemId: string | null, name: string, quantity: string, amount: string, label: string, effective: Date, end: Date): ModificationLine {
  return { subscription_line_item_id: lineItemId, price_id: price.id, display_name: `${label}: ${name}`, quantity, amount, period_start: effective, period_end: end }
}

function finishPlan(p: Omit<ModificationPlan, 'total'>): ModificationPlan {
  return { ...p, total: toMoneyString(p.lines.reduce((sum, l) => sum.plus(l.amount), D(0)), p.subscription.currency) }
}

/** Reads only: validates any change and computes its proration lines. */
export async function planModification(em: EntityManager, scope: Scope, now: Date, sub: Subscription, input: ModificationInput): Promise<ModificationPlan> {
  if (input.change_type === 'quantity_change') return planQuantityChange(em, scope, now, sub, input)
  const effective = checkModifiable(sub, now, input)
  const prorationBehavior = input.proration_behavior ?? 'create_prorations'
  const { current_period_end: end, currency } = sub
  if (input.change_type === 'remove_line_item') {
    if (input.quantity !== undefined) throw new ValidationError('quantity is not accepted with remove_line_item', 'quantity')
    const lineItem = await currentLineItem(em, scope, sub, input.line_item_id, effective)
    const price = await em.findOneOrFail(PriceSchema, { id: lineItem.price_id, ...scope })
    const lines: ModificationLine[] = []
    if (prorates(sub, price, prorationBehavior)) {
      const { credit } = prorateQuantityChange(periodAmount(price, lineItem.quantity, currency), '0', sub.current_period_start, end, effective, currency)
      lines.push(modificationLine(price, lineItem.id, lineItem.display_name ?? price.display_name ?? price.id, lineItem.quantity, credit, 'Unused time', effective, end))
    }
    return finishPlan({
      changeType: 'remove_line_item', subscription: sub, lineItem, price, quantity: null, effective, prorationBehavior, lines,
      idempotencyKey: idempotencyKey(sub, 'remove_line_item', lineItem.id, null, effective),
    })
  }
  // add_line_item
  if (!input.price_id) throw new ValidationError('price_id is required', 'price_id')
  if (input.line_item_id !== undefined) throw new ValidationError('line_item_id is not accepted with add_line_item', 'line_item_id')
  const price = await em.findOne(PriceSchema, { id: input.price_id, ...scope, status: 'published' })
  if (!price) throw new ValidationError(`price ${input.price_id} not found`, 'price_id')
  const owner = price.entity_type === 'ADDON'
    ? await em.findOne(AddonSchema, { id: price.entity_id, ...scope, status: 'published' })
    : price.entity_id === sub.plan_id ? price : null
  if (!owner) throw new ValidationError(`price ${price.id} belongs neither to plan ${sub.plan_id} nor to a published add-on`, 'price_id')
  if (price.currency !== sub.currency) throw new ValidationError(`price ${price.id} is in ${price.currency}, the subscription in ${sub.currency}`, 'price_id')
  if (price.billing_period !== sub.billing_period || price.billing_period_count !== sub.billing_period_count) {
    throw new ValidationError(`price ${price.id} is billed every ${price.billing_period_count} ${price.billing_period}, the subscription every ${sub.billing_period_count} ${sub.billing_period}`, 'price_id')
  }
  if (price.type === 'USAGE' && input.quantity !== undefined) throw new ValidationError(`price ${price.id} is a USAGE price: its quantity is measured, not set`, 'quantity')
  const quantity = normalized(input.quantity ?? '1')
  if (D(quantity).lte(0)) throw new ValidationError('quantity must be greater than 0', 'quantity')
  const existing = await em.findOne(SubscriptionLineItemSchema, {
    subscription_id: sub.id, ...scope, price_id: price.id, status: 'published', $or: [{ end_date: null }, { end_date: { $gt: effective } }],
  })
  if (existing) throw new ValidationError(`price ${price.id} is already on subscription ${sub.id} (line item ${existing.id}); use quantity_change`, 'price_id')
  const lines: ModificationLine[] = []
  if (prorates(sub, price, prorationBehavior)) {
    const { debit } = prorateQuantityChange('0', periodAmount(price, quantity, currency), sub.current_period_start, end, effective, currency)
    lines.push(modificationLine(price, null, price.display_name ?? price.id, quantity, debit, 'Remaining time', effective, end))
  }
  return finishPlan({
    changeType: 'add_line_item', subscription: sub, lineItem: null, price, quantity, effective, prorationBehavior, lines,
    idempotencyKey: idempotencyKey(sub, 'add_line_item', price.id, quantity, effective),
  })
}

/** Reads only: validates a quantity change and computes its proration lines. */
export async function planQuantityChange(em: EntityManager, scope: Scope, now: Date, sub: Subscription, input: ModificationInput): Promise<ModificationPlan> {
  const effective = checkModifiable(sub, now, input)
  if (input.quantity === undefined) throw new ValidationError('quantity is required', 'quantity')
  if (input.price_id !== undefined) throw new ValidationError('price_id is not accepted with quantity_change', 'price_id')
  const quantity = D(input.quantity)
  if (!quantity.isFinite() || quantity.lte(0)) throw new ValidationError('quantity must be greater than 0', 'quantity')
  const lineItem = await currentLineItem(em, scope, sub, input.line_item_id, effective)
  const { current_period_start: start, current_period_end: end, currency } = sub
  const price = await em.findOneOrFail(PriceSchema, { id: lineItem.price_id, ...scope })
  if (price.type !== 'FIXED') throw new ValidationError(`line item ${lineItem.id} has a ${price.type} price: its quantity is measured, not set`, 'line_item_id')
  if (quantity.eq(lineItem.quantity)) throw new ValidationError(`line item ${lineItem.id} already has quantity ${lineItem.quantity}`, 'quantity')
  const prorationBehavior = input.proration_behavior ?? 'create_prorations'
  const lines: ModificationLine[] = []
  if (prorates(sub, price, prorationBehavior)) {
    const { credit, debit } = prorateQuantityChange(periodAmount(price, lineItem.quantity, currency), periodAmount(price, input.quantity, currency), start, end, effective, currency)
    const name = lineItem.display_name ?? price.display_name ?? price.id
    lines.push(
      modificationLine(price, lineItem.id, name, lineItem.quantity, credit, 'Unused time', effective, end),
      modificationLine(price, null, name, normalized(input.quantity), debit, 'Remaining time', effective, end),
    )
  }
  return finishPlan({
    changeType: 'quantity_change', subscription: sub, lineItem, price, quantity: normalized(input.quantity), effective, prorationBehavior, lines,
    idempotencyKey: idempotencyKey(sub, 'quantity_change', lineItem.id, input.quantity, effective),
  })
}

export async function previewModification(ctx: BillingContext, scope: Scope, id: string, input: ModificationInput): Promise<ModificationPlan> {
  const em = ctx.orm.em.fork()
  const sub = await em.findOne(SubscriptionSchema, { id, ...scope, status: { $ne: 'deleted' } })
  if (!sub) throw new NotFoundError('subscription', id)
  if (input.version !== undefined && input.version !== sub.version) {
    throw new VersionConflictError(`subscription ${id} is at version ${sub.version}, not ${input.version}; reload and retry`)
  }
  return planModification(em, scope, ctx.clock.now(), sub, input)
}

export interface AppliedModification {
  subscription: Subscription
  lineItems: SubscriptionLineItem[]
  invoice: { invoice: Invoice; lines: InvoiceLineItem[] } | null
}

export async function applyModification(ctx: BillingContext, scope: Scope, userId: string, id: string, input: ModificationInput): Promise<AppliedModification> {
  const now = ctx.clock.now()
  return ctx.orm.em.fork().transactional(async (tx) => {
    const sub = await lockSubscription(tx, scope, id)
    const current = async () => tx.find(SubscriptionLineItemSchema, { subscription_id: id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
    const replayed = await findApplied(tx, scope, now, sub, input)
    if (replayed) return { subscription: sub, lineItems: await current(), invoice: await loadInvoice(tx, scope, replayed) }
    if (input.version !== undefined && input.version !== sub.version) {
      throw new VersionConflictError(`subscription ${id} is at version ${sub.version}, not ${input.version}; reload and retry`)
    }
    const plan = await planModification(tx, scope, now, sub, input)
    const old = plan.lineItem
    let successorId: string | null = null
    if (plan.quantity !== null) {
      const from = old ?? {
        customer_id: sub.customer_id, price_id: plan.price.id, meter_id: plan.price.meter_id, currency: sub.currency,
        display_name: plan.price.display_name, end_date: null, metadata: {},
      }
      successorId = tx.create(SubscriptionLineItemSchema, {
        id: newId('subs_line'), ...scope, subscription_id: sub.id, customer_id: from.customer_id, price_id: from.price_id, meter_id: from.meter_id,
        currency: from.currency, display_name: from.display_name, quantity: plan.quantity, start_date: plan.effective, end_date: from.end_date,
        status: 'published', metadata: from.metadata, created_by: userId, updated_by: userId,
      }).id
    }
    if (old) {
      old.end_date = plan.effective
      old.status = 'archived'
      old.updated_by = userId
    }
    // The subscription changed through its line items: touching it makes the flush bump its version.
    sub.updated_by = userId
    sub.updated_at = new Date()
    const invoice = plan.lines.length ? createModificationInvoice(ctx, tx, plan, successorId) : null
    publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
    await tx.flush()
    return { subscription: sub, lineItems: await current(), invoice: invoice ? await loadInvoice(tx, scope, plan.idempotencyKey) : null }
  })
}

/** The invoice key of an already applied identical change, found from the line items it left. */
async function findApplied(tx: EntityManager, scope: Scope, now: Date, sub: Subscription, input: ModificationInput): Promise<string | null> {
  // a retry without effective_date (now) matches within the minute of the first request
  const sameMinute = (d: Date) => minuteKey(input.effective_date !== undefined ? new Date(input.effective_date) : now) === minuteKey(d)
  if (input.change_type === 'add_line_item') {
    if (!input.price_id) return null
    const quantity = normalized(input.quantity ?? '1')
    const added = await tx.findOne(SubscriptionLineItemSchema, { subscription_id: sub.id, ...scope, price_id: input.price_id, status: 'published' }, { orderBy: { start_date: 'desc' } })
    if (!added || !sameMinute(added.start_date) || !D(added.quantity).eq(quantity)) return null
    return idempotencyKey(sub, 'add_line_item', input.price_id, quantity, added.start_date)
  }
  if (!input.line_item_id) return null
  const old = await tx.findOne(SubscriptionLineItemSchema, { id: input.line_item_id, subscription_id: sub.id, ...scope, status: 'archived' })
  if (!old?.end_date || !sameMinute(old.end_date)) return null
  const successor = await tx.findOne(SubscriptionLineItemSchema, {
    subscription_id: sub.id, ...scope, price_id: old.price_id, start_date: old.end_date, status: { $ne: 'deleted' },
  })
  if (input.change_type === 'remove_line_item') return successor ? null : idempotencyKey(sub, 'remove_line_item', old.id, null, old.end_date)
  if (!successor || input.quantity === undefined || !D(successor.quantity).eq(input.quantity)) return null
  return idempotencyKey(sub, 'quantity_change', old.id, input.quantity, old.end_date)
}

export async function loadInvoice(tx: EntityManager, scope: Scope, key: string) {
  const invoice = await findLiveInvoice(tx, scope, key)
  if (!invoice) return null
  const lines = await tx.find(InvoiceLineItemSchema, { invoice_id: invoice.id, ...scope }, { orderBy: { amount: 'asc', id: 'asc' } })
  return { invoice, lines }
}

/** The PRORATION invoice of a change, with exactly the plan's lines; created inside the caller's transaction. */
export function createModificationInvoice(
  ctx: BillingContext, tx: EntityManager, plan: Pick<ModificationPlan, 'subscription' | 'total' | 'effective' | 'idempotencyKey' | 'lines'>, successorId: string | null,
): Invoice {
  const sub = plan.subscription
  // A negative net (a decrease) stays as the invoice total with nothing due, like a cancellation's.
  const { invoice } = ctx.subscriptionInvoicing.writeSubscriptionInvoice(tx, {
    subscription: sub, billingReason: 'PRORATION', periodStart: plan.effective, periodEnd: sub.current_period_end,
    idempotencyKey: plan.idempotencyKey, subtotal: plan.total, total: plan.total, now: ctx.clock.now(),
  }, plan.lines.map((l) => ({
    subscription_line_item_id: l.subscription_line_item_id ?? successorId, price_id: l.price_id, price_type: 'FIXED', meter_id: null,
    display_name: l.display_name, amount: l.amount, quantity: l.quantity, period_start: l.period_start, period_end: l.period_end,
  })))
  return invoice
}
