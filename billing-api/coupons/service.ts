// Coupon use cases: create, read, list, update, archive. Redemption is in redeem-coupon.ts.
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { Metadata } from '../db/common.js'
import type { Page } from '../http/schemas.js'
import { CouponSchema, type Coupon, type CouponType } from './coupon.entity.js'
import { checkMaxRedemptions, checkRedemptionWindow, couponTerms, dateField, type CouponTermsInput } from './coupon-terms.js'
import { findInScope, retireRecord, publishedBy } from '../db/scoped-records.js'

export interface CreateCouponInput extends CouponTermsInput {
  name: string
  rules?: Record<string, unknown>
  metadata?: Metadata
}

export async function createCoupon(em: EntityManager, scope: Scope, userId: string, input: CreateCouponInput): Promise<Coupon> {
  const coupon = em.create(CouponSchema, {
    id: newId('coupon'),
    ...scope,
    name: input.name,
    ...couponTerms(input),
    total_redemptions: 0,
    rules: input.rules ?? {},
    ...publishedBy(userId, input.metadata),
  })
  await em.flush()
  return coupon
}

export async function getCoupon(em: EntityManager, scope: Scope, id: string): Promise<Coupon> {
  return findInScope(em, CouponSchema, scope, id, 'coupon')
}

export interface CouponFilter extends Page {
  status: 'published' | 'archived'
  type?: CouponType
}

export async function listCoupons(em: EntityManager, scope: Scope, filter: CouponFilter): Promise<[Coupon[], number]> {
  const where: Record<string, unknown> = { ...scope, status: filter.status }
  if (filter.type) where.type = filter.type
  return em.findAndCount(CouponSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: filter.limit, offset: filter.offset })
}

/** The only terms that may change once a coupon may have been redeemed. */
export interface UpdateCouponInput {
  name?: string
  metadata?: Metadata
  max_redemptions?: number | null
  redeem_before?: string | null
}

export async function updateCoupon(em: EntityManager, scope: Scope, userId: string, id: string, input: UpdateCouponInput): Promise<Coupon> {
  return em.transactional(async (tx) => {
    // The row lock makes a concurrent redemption wait, so total_redemptions cannot pass the new max.
    const coupon = await tx.findOne(CouponSchema, { id, ...scope, status: { $ne: 'deleted' } }, { lockMode: LockMode.PESSIMISTIC_WRITE })
    if (!coupon) throw new NotFoundError('coupon', id)
    if (input.max_redemptions !== undefined) {
      checkMaxRedemptions(input.max_redemptions, coupon.total_redemptions)
      coupon.max_redemptions = input.max_redemptions
    }
    if (input.redeem_before !== undefined) {
      const before = dateField(input.redeem_before, 'redeem_before')
      checkRedemptionWindow(coupon.redeem_after, before)
      coupon.redeem_before = before
    }
    if (input.name !== undefined) coupon.name = input.name
    if (input.metadata !== undefined) coupon.metadata = input.metadata
    coupon.updated_by = userId
    return coupon
  })
}

/** Delete archives: invoices that carry the coupon keep resolving it, but it can no longer be redeemed. */
export async function archiveCoupon(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  const coupon = await getCoupon(em, scope, id)
  if (coupon.status === 'archived') return
  await retireRecord(em, coupon, 'archived', userId)
}
