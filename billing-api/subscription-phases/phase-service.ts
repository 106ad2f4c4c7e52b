// Scheduling phases: add one (its prices and coupons checked now), list, delete one not yet
// started. Every change locks the subscription and rewrites the schedule's end dates (and the
// end dates of the coupon associations an applied phase created) in one transaction.
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Clock } from '../../platform/clock.js'
import type { Metadata } from '../db/common.js'
import type { Scope } from '../db/scope.js'
import { CouponAssociationSchema } from '../coupons/coupon-association.entity.js'
import { CouponSchema } from '../coupons/coupon.entity.js'
import { PriceSchema } from '../plans/price.entity.js'
import { D } from '../pricing/index.js'
import { assertUsageInArrear, lockSubscription } from '../subscriptions/index.js'
import { SubscriptionSchema, type Subscription } from '../subscriptions/subscription.entity.js'
import { SubscriptionPhaseSchema, type SubscriptionPhase } from './phase.entity.js'
import { checkNewPhaseStart, phaseEnds } from './phase-schedule.js'

export interface PhaseInput {
  start_date: string
  line_items: { price_id: string; quantity?: string }[]
  coupon_ids?: string[]
  metadata?: Metadata
}

const SCHEDULABLE = ['ACTIVE', 'TRIALING']

async function schedule(em: EntityManager, scope: Scope, subscriptionId: string): Promise<SubscriptionPhase[]> {
  return em.find(SubscriptionPhaseSchema, { ...scope, subscription_id: subscriptionId, status: 'published' }, { orderBy: { start_date: 'asc' } })
}

async function rewriteEnds(tx: EntityManager, scope: Scope, phases: SubscriptionPhase[]): Promise<void> {
  const ends = phaseEnds(phases)
  for (const p of phases) {
    const end = ends.get(p.id) ?? null
    if ((p.end_date?.getTime() ?? null) === (end?.getTime() ?? null)) continue
    p.end_date = end
    if (p.applied_at) {
      const associations = await tx.find(CouponAssociationSchema, { ...scope, subscription_phase_id: p.id, status: 'published' })
      for (const a of associations) a.end_date = end
    }
  }
}

async function checkLineItems(em: EntityManager, scope: Scope, sub: Subscription, items: PhaseInput['line_items']): Promise<void> {
  const ids = items.map((l) => l.price_id)
  if (new Set(ids).size !== ids.length) throw new ValidationError('line_items: a price may appear once', 'line_items')
  const prices = await em.find(PriceSchema, { ...scope, id: { $in: ids }, status: 'published' })
  for (const [i, item] of items.entries()) {
    const price = prices.find((p) => p.id === item.price_id)
    const at = `line_items[${i}]`
    if (!price) throw new ValidationError(`${at}.price_id: price ${item.price_id} not found`, `${at}.price_id`)
    if (price.currency !== sub.currency) throw new ValidationError(`${at}.price_id: price ${price.id} is in ${price.currency}, the subscription in ${sub.currency}`, `${at}.price_id`)
    if (price.billing_period !== sub.billing_period || price.billing_period_count !== sub.billing_period_count) {
      throw new ValidationError(`${at}.price_id: price ${price.id} is not billed every ${sub.billing_period_count} ${sub.billing_period} like the subscription`, `${at}.price_id`)
    }
    if (item.quantity !== undefined && D(item.quantity).lte(0)) throw new ValidationError(`${at}.quantity must be above 0`, `${at}.quantity`)
    if (item.quantity !== undefined && price.type === 'USAGE' && !D(item.quantity).eq(1)) throw new ValidationError(`${at}.quantity: usage prices are measured, not counted`, `${at}.quantity`)
  }
  assertUsageInArrear(prices, 'line_items')
}

async function checkCoupons(em: EntityManager, scope: Scope, sub: Subscription, couponIds: string[]): Promise<void> {
  for (const [i, id] of couponIds.entries()) {
    const coupon = await em.findOne(CouponSchema, { id, ...scope, status: 'published' })
    if (!coupon) throw new ValidationError(`coupon_ids[${i}]: coupon ${id} not found`, `coupon_ids[${i}]`)
    if (coupon.type === 'fixed' && coupon.currency !== sub.currency.toUpperCase()) {
      throw new ValidationError(`coupon_ids[${i}]: a ${coupon.currency} coupon cannot discount a ${sub.currency} subscription`, `coupon_ids[${i}]`)
    }
  }
}

export async function addPhase(em: EntityManager, clock: Clock, scope: Scope, userId: string, subscriptionId: string, input: PhaseInput): Promise<SubscriptionPhase> {
  return em.transactional(async (tx) => {
    const sub = await lockSubscription(tx, scope, subscriptionId)
    if (!SCHEDULABLE.includes(sub.subscription_status)) throw new InvalidOperationError(`subscription ${sub.id} is ${sub.subscription_status}; phases are scheduled on ACTIVE or TRIALING subscriptions`)
    if (sub.subscription_type === 'INHERITED') throw new ValidationError(`subscription ${sub.id} is INHERITED: it has no line items of its own`, 'subscription_id')
    const start = new Date(input.start_date)
    const phases = await schedule(tx, scope, sub.id)
    checkNewPhaseStart(phases, start, sub.start_date, clock.now())
    if (sub.cancel_at && start >= sub.cancel_at) throw new ValidationError(`start_date must be before the subscription's cancellation at ${sub.cancel_at.toISOString()}`, 'start_date')
    await checkLineItems(tx, scope, sub, input.line_items)
    await checkCoupons(tx, scope, sub, input.coupon_ids ?? [])
    const phase = tx.create(SubscriptionPhaseSchema, {
      id: newId('subs_phase'), ...scope, subscription_id: sub.id, start_date: start, end_date: null,
      line_items: input.line_items.map((l) => ({ price_id: l.price_id, quantity: D(l.quantity ?? '1').toString() })),
      coupon_ids: input.coupon_ids ?? [], applied_at: null, status: 'published', metadata: input.metadata ?? {},
      created_by: userId, updated_by: userId,
    })
    await rewriteEnds(tx, scope, [...phases, phase])
    await tx.flush()
    return phase
  })
}

export async function listPhases(em: EntityManager, scope: Scope, subscriptionId: string): Promise<SubscriptionPhase[]> {
  const sub = await em.findOne(SubscriptionSchema, { id: subscriptionId, ...scope, status: { $ne: 'deleted' } })
  if (!sub) throw new NotFoundError('subscription', subscriptionId)
  return schedule(em, scope, subscriptionId)
}

export async function deletePhase(em: EntityManager, scope: Scope, userId: string, subscriptionId: string, phaseId: string): Promise<void> {
  await em.transactional(async (tx) => {
    await lockSubscription(tx, scope, subscriptionId)
    const phases = await schedule(tx, scope, subscriptionId)
    const phase = phases.find((p) => p.id === phaseId)
    if (!phase) throw new NotFoundError('subscription phase', phaseId)
    if (phase.applied_at) throw new InvalidOperationError(`phase ${phaseId} started at ${phase.start_date.toISOString()} and cannot be deleted`)
    phase.status = 'deleted'
    phase.updated_by = userId
    await rewriteEnds(tx, scope, phases.filter((p) => p.id !== phaseId))
    await tx.flush()
  })
}
