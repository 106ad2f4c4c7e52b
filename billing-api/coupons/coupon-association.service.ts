// Attaching a coupon to a subscription (spec: CouponAssociation). Creating the association
// redeems the coupon once (redeem-coupon.ts, in the same transaction), so a refused redemption
// attaches nothing. Invoices read the associations at draft computation (invoices/apply-coupons.ts).
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Clock } from '../../platform/clock.js'
import { NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { Metadata } from '../db/common.js'
import { SubscriptionLineItemSchema, SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { CouponSchema } from './coupon.entity.js'
import { CouponAssociationSchema, type CouponAssociation } from './coupon-association.entity.js'
import { dateField } from './coupon-terms.js'
import { redeemCoupon } from './redeem-coupon.js'
import { retireRecord } from '../db/scoped-records.js'

export interface CouponAssociationInput {
  coupon_id: string
  subscription_id: string
  /** discount this line only; omitted: the whole invoice */
  subscription_line_item_id?: string
  start_date?: string
  end_date?: string
  metadata?: Metadata
}

export async function createCouponAssociation(
  em: EntityManager, clock: Clock, scope: Scope, userId: string | null, input: CouponAssociationInput,
): Promise<CouponAssociation> {
  const now = clock.now()
  const start = dateField(input.start_date, 'start_date') ?? now
  const end = dateField(input.end_date, 'end_date')
  if (end && !(start < end)) throw new ValidationError('end_date must be after start_date', 'end_date')
  return em.transactional(async (tx) => {
    const sub = await tx.findOne(SubscriptionSchema, { id: input.subscription_id, ...scope, status: 'published' })
    if (!sub) throw new ValidationError(`subscription_id: subscription ${input.subscription_id} not found`, 'subscription_id')
    if (input.subscription_line_item_id !== undefined) {
      const line = await tx.findOne(SubscriptionLineItemSchema, { id: input.subscription_line_item_id, subscription_id: sub.id, ...scope })
      if (!line) throw new ValidationError(`subscription_line_item_id: line item ${input.subscription_line_item_id} is not on subscription ${sub.id}`, 'subscription_line_item_id')
    }
    const coupon = await tx.findOne(CouponSchema, { id: input.coupon_id, ...scope, status: { $ne: 'deleted' } })
    if (!coupon) throw new ValidationError(`coupon_id: coupon ${input.coupon_id} not found`, 'coupon_id')
    if (coupon.type === 'fixed' && coupon.currency !== sub.currency.toUpperCase()) {
      throw new ValidationError(`coupon_id: a ${coupon.currency} coupon cannot discount a ${sub.currency} subscription`, 'coupon_id')
    }
    await redeemCoupon(tx, scope, coupon.id, now)
    const association = tx.create(CouponAssociationSchema, {
      id: newId('coupon_assoc'), ...scope, coupon_id: coupon.id, subscription_id: sub.id,
      subscription_line_item_id: input.subscription_line_item_id ?? null, subscription_phase_id: null,
      start_date: start, end_date: end, redeemed_at: now, status: 'published', metadata: input.metadata ?? {},
      created_by: userId, updated_by: userId,
    })
    await tx.flush()
    return association
  })
}

export async function listCouponAssociations(em: EntityManager, scope: Scope, subscriptionId: string): Promise<CouponAssociation[]> {
  return em.find(CouponAssociationSchema, { ...scope, subscription_id: subscriptionId, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
}

/** Detaching stops future draft computations from applying it; the redemption stays counted. */
export async function deleteCouponAssociation(em: EntityManager, scope: Scope, userId: string | null, id: string): Promise<void> {
  const association = await em.findOne(CouponAssociationSchema, { id, ...scope, status: 'published' })
  if (!association) throw new NotFoundError('coupon association', id)
  await retireRecord(em, association, 'deleted', userId)
}
