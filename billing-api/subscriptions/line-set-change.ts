// Modifications that end a set of line items and start another (plan_change in plan-change.ts,
// addon_attach / addon_detach in addon-attach.ts). Like modify.ts: the preview writes nothing,
// the apply writes exactly the preview's PRORATION invoice (billing reason PRORATION) once,
// and a repeat of an applied change returns the same result. Each recurring FIXED price billed
// in ADVANCE on a paid period gets a credit for the unused part of the ended line item and a
// debit for the new one, over the period of the line item's own cadence (cadence.ts).
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError, ValidationError, VersionConflictError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { invoiceIdempotencyKey } from '../invoices/index.js'
import { PriceSchema, type Price } from '../plans/price.entity.js'
import { D, toMoneyString } from '../pricing/index.js'
import { lineItemPeriod, priceCadence } from '../periods/cadence.js'
import {
  checkModifiable, createModificationInvoice, loadInvoice, periodAmount, prorates, PRORATION_BEHAVIORS,
  type AppliedModification, type ModificationInput, type ModificationLine,
} from './modify.js'
import { windowAmount } from '../periods/proration-window.js'
import { eventPayload, lockSubscription } from './service.js'
import { SubscriptionLineItemSchema, SubscriptionSchema, type Subscription, type SubscriptionLineItem } from './subscription.entity.js'

export const LINE_SET_CHANGE_TYPES = ['plan_change', 'addon_attach', 'addon_detach'] as const
export type LineSetChangeType = (typeof LINE_SET_CHANGE_TYPES)[number]
export type ProrationBehavior = (typeof PRORATION_BEHAVIORS)[number]

export interface LineSetChangeInput {
  change_type: LineSetChangeType
  /** plan_change: the new plan */
  plan_id?: string
  /** addon_attach / addon_detach */
  addon_id?: string
  /** addon_attach: FIXED prices' quantity (default 1) */
  quantity?: string
  /** addon_attach: the attachment's effective end (its line items' end_date) */
  end_date?: string
  effective_date?: string
  proration_behavior?: ProrationBehavior
  version?: number
  line_item_id?: string
  price_id?: string
}

export const isLineSetChange = (input: { change_type: string }): input is LineSetChangeInput =>
  (LINE_SET_CHANGE_TYPES as readonly string[]).includes(input.change_type)

export interface NewLineItem {
  price: Price
  quantity: string
  display_name: string
  end_date: Date | null
}

export interface LineSetPlan {
  changeType: LineSetChangeType
  subscription: Subscription
  effective: Date
  prorationBehavior: ProrationBehavior
  ended: SubscriptionLineItem[]
  added: NewLineItem[]
  /** credit lines carry the ended line item's id; a debit line's id is its added line item's, null before the apply */
  lines: (ModificationLine & { addedIndex: number | null })[]
  total: string
  idempotencyKey: string
  /** plan_change: the plan before and after */
  oldPlanId: string | null
  newPlanId: string | null
  /** the plan's max_price_sequence the subscription then reflects */
  newPriceSequence: number | null
  addonId: string | null
  /** addon_detach: the attachment ended */
  associationId: string | null
  addonEndDate: Date | null
}

/** The change-specific part: validation, the line items ended and added, and the apply's own writes. */
export interface LineSetHandler {
  plan(em: EntityManager, scope: Scope, sub: Subscription, effective: Date, input: LineSetChangeInput): Promise<Omit<LineSetPlan, 'lines' | 'total' | 'idempotencyKey' | 'subscription' | 'effective' | 'prorationBehavior' | 'changeType'>>
  /** the invoice key's target (new plan, add-on) */
  target(input: LineSetChangeInput): string
  /** the effective date of an already applied identical change, or null */
  findApplied(tx: EntityManager, scope: Scope, sub: Subscription, input: LineSetChangeInput, now: Date): Promise<Date | null>
  /** writes besides the line items (the subscription's plan, the add-on association); returns the new line items' association id */
  apply(tx: EntityManager, scope: Scope, userId: string, plan: LineSetPlan, now: Date): string | null
}

export function refuseFields(input: LineSetChangeInput, fields: (keyof LineSetChangeInput)[]): void {
  for (const f of fields) {
    if (input[f] !== undefined) throw new ValidationError(`${f} is not accepted with ${input.change_type}`, f)
  }
}

/** Errors 9: usage prices are measured over the period and billed in arrear. */
export function assertUsageInArrear(prices: Price[], field: string): void {
  const advance = prices.find((p) => p.type === 'USAGE' && p.invoice_cadence !== 'ARREAR')
  if (advance) throw new ValidationError(`price ${advance.id} is a USAGE price billed in ADVANCE; usage prices must be billed in arrear`, field)
}

export const sameMinute = (a: Date, b: Date) => Math.floor(a.getTime() / 60_000) === Math.floor(b.getTime() / 60_000)

/** The minute a retry must match: its effective_date, or without one the time of the request. */
export const requestedMinute = (input: LineSetChangeInput, now: Date): Date => (input.effective_date ? new Date(input.effective_date) : now)

export function keyOf(sub: Subscription, changeType: LineSetChangeType, target: string, effective: Date): string {
  return `${invoiceIdempotencyKey(sub.id, 'PRORATION', effective, sub.current_period_end)}:${changeType}:${target}`
}

/** The window a line item's advance charge covers from `effective`: to its end date or its cadence period's end. */
function windowOf(sub: Subscription, price: Price, effective: Date, endDate: Date | null) {
  const period = lineItemPeriod(sub, priceCadence(price)!, effective)
  const to = endDate && endDate < period.end ? endDate : period.end
  return { period, to }
}

/** Reads only. */
export async function planLineSetChange(
  em: EntityManager, scope: Scope, now: Date, sub: Subscription, input: LineSetChangeInput, handler: LineSetHandler,
): Promise<LineSetPlan> {
  const effective = checkModifiable(sub, now, { effective_date: input.effective_date } as ModificationInput)
  const prorationBehavior = input.proration_behavior ?? 'create_prorations'
  const part = await handler.plan(em, scope, sub, effective, input)
  const { currency } = sub
  const prices = new Map((await em.find(PriceSchema, { id: { $in: part.ended.map((l) => l.price_id) }, ...scope })).map((p) => [p.id, p]))
  const lines: LineSetPlan['lines'] = []
  for (const li of part.ended) {
    const price = prices.get(li.price_id)!
    if (!prorates(sub, price, prorationBehavior)) continue
    const { period, to } = windowOf(sub, price, effective, li.end_date)
    const amount = D(windowAmount(periodAmount(price, li.quantity, currency), period, effective, to, currency)).negated()
    if (amount.isZero()) continue
    lines.push({
      subscription_line_item_id: li.id, addedIndex: null, price_id: price.id, display_name: `Unused time: ${li.display_name ?? price.display_name ?? price.id}`,
      quantity: li.quantity, amount: toMoneyString(amount, currency), period_start: effective, period_end: to,
    })
  }
  part.added.forEach((nl, i) => {
    if (!prorates(sub, nl.price, prorationBehavior)) return
    const { period, to } = windowOf(sub, nl.price, effective, nl.end_date)
    lines.push({
      subscription_line_item_id: null, addedIndex: i, price_id: nl.price.id, display_name: `Remaining time: ${nl.display_name}`,
      quantity: nl.quantity, amount: windowAmount(periodAmount(nl.price, nl.quantity, currency), period, effective, to, currency),
      period_start: effective, period_end: to,
    })
  })
  const total = toMoneyString(lines.reduce((sum, l) => sum.plus(l.amount), D(0)), currency)
  return {
    ...part, changeType: input.change_type, subscription: sub, effective, prorationBehavior, lines, total,
    idempotencyKey: keyOf(sub, input.change_type, handler.target(input), effective),
  }
}

export async function previewLineSetChange(ctx: BillingContext, scope: Scope, id: string, input: LineSetChangeInput, handler: LineSetHandler): Promise<LineSetPlan> {
  const em = ctx.orm.em.fork()
  const sub = await em.findOne(SubscriptionSchema, { id, ...scope, status: { $ne: 'deleted' } })
  if (!sub) throw new NotFoundError('subscription', id)
  if (input.version !== undefined && input.version !== sub.version) {
    throw new VersionConflictError(`subscription ${id} is at version ${sub.version}, not ${input.version}; reload and retry`)
  }
  return planLineSetChange(em, scope, ctx.clock.now(), sub, input, handler)
}

export async function applyLineSetChange(
  ctx: BillingContext, scope: Scope, userId: string, id: string, input: LineSetChangeInput, handler: LineSetHandler,
): Promise<AppliedModification> {
  const now = ctx.clock.now()
  return ctx.orm.em.fork().transactional(async (tx) => {
    const sub = await lockSubscription(tx, scope, id)
    const current = async () => tx.find(SubscriptionLineItemSchema, { subscription_id: id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
    // a retried request (even with its now stale version) gets the first one's result
    const replayed = await handler.findApplied(tx, scope, sub, input, now)
    if (replayed) {
      const key = keyOf(sub, input.change_type, handler.target(input), replayed)
      return { subscription: sub, lineItems: await current(), invoice: await loadInvoice(tx, scope, key) }
    }
    if (input.version !== undefined && input.version !== sub.version) {
      throw new VersionConflictError(`subscription ${id} is at version ${sub.version}, not ${input.version}; reload and retry`)
    }
    const plan = await planLineSetChange(tx, scope, now, sub, input, handler)
    const associationId = handler.apply(tx, scope, userId, plan, now)
    for (const old of plan.ended) {
      old.end_date = plan.effective
      old.status = 'archived'
      old.updated_by = userId
    }
    const created = plan.added.map((nl) => tx.create(SubscriptionLineItemSchema, {
      id: newId('subs_line'), ...scope, subscription_id: sub.id, customer_id: sub.customer_id, price_id: nl.price.id, meter_id: nl.price.meter_id,
      currency: sub.currency, display_name: nl.display_name, quantity: nl.quantity, start_date: plan.effective, end_date: nl.end_date,
      addon_association_id: associationId, status: 'published', metadata: {}, created_by: userId, updated_by: userId,
    }))
    // The subscription changed through its line items: touching it makes the flush bump its version.
    sub.updated_by = userId
    sub.updated_at = new Date()
    if (plan.lines.length) {
      const lines = plan.lines.map(({ addedIndex, ...l }) => ({ ...l, subscription_line_item_id: addedIndex === null ? l.subscription_line_item_id : created[addedIndex].id }))
      createModificationInvoice(ctx, tx, { ...plan, lines }, null)
    }
    publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
    await tx.flush()
    return { subscription: sub, lineItems: await current(), invoice: plan.lines.length ? await loadInvoice(tx, scope, plan.idempotencyKey) : null }
  })
}
