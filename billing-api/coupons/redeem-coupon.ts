// Redeeming a coupon counts one redemption. The count is checked and incremented by a single
// conditional UPDATE, so concurrent redemptions can never exceed max_redemptions; a read-then-write
// would let two requests both see the last free slot.
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, NotFoundError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { CouponSchema, type Coupon } from './coupon.entity.js'
import { redemptionRefusal } from './discount.js'

// The conditions mirror redemptionRefusal in discount.ts: published, inside [redeem_after, redeem_before), below the max.
const REDEEM_SQL = `
  UPDATE coupons
     SET total_redemptions = total_redemptions + 1, updated_at = now()
   WHERE id = ? AND tenant_id = ? AND environment_id = ?
     AND status = 'published'
     AND (redeem_after IS NULL OR redeem_after <= ?)
     AND (redeem_before IS NULL OR redeem_before > ?)
     AND (max_redemptions IS NULL OR total_redemptions < max_redemptions)
  RETURNING *`

/** Counts one redemption of the coupon at `at`; runs in the caller's transaction when there is one. */
export async function redeemCoupon(em: EntityManager, scope: Scope, couponId: string, at: Date): Promise<Coupon> {
  const rows = await em
    .getConnection()
    .execute(REDEEM_SQL, [couponId, scope.tenant_id, scope.environment_id, at, at], 'all', em.getTransactionContext())
  if (rows.length === 1) return em.map(CouponSchema, rows[0])

  const coupon = await em.findOne(CouponSchema, { id: couponId, ...scope, status: { $ne: 'deleted' } }, { refresh: true })
  if (!coupon) throw new NotFoundError('coupon', couponId)
  throw new InvalidOperationError(`coupon ${couponId} cannot be redeemed: ${redemptionRefusal(coupon, at) ?? 'it changed while redeeming; retry'}`)
}
