// Reads a subscription's coupon associations with their coupons and how many invoices each has
// already discounted (for the coupon's duration). Reads only.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { CouponSchema } from '../coupons/coupon.entity.js'
import { CouponAssociationSchema } from '../coupons/coupon-association.entity.js'
import type { AttachedCoupon } from './apply-coupons.js'

const TIMES_APPLIED_SQL = `
  SELECT ca.coupon_association_id AS id, count(DISTINCT ca.invoice_id) AS n
    FROM coupon_applications ca JOIN invoices i ON i.id = ca.invoice_id
   WHERE ca.tenant_id = ? AND ca.environment_id = ? AND ca.coupon_association_id IN (?)
     AND i.invoice_status <> 'VOIDED' AND i.status <> 'deleted' AND ca.invoice_id <> ?
   GROUP BY ca.coupon_association_id`

/** In association order (created_at, id); `exceptInvoiceId` is the invoice being recomputed. */
export async function attachedCoupons(em: EntityManager, scope: Scope, subscriptionId: string, exceptInvoiceId = ''): Promise<AttachedCoupon[]> {
  const associations = await em.find(
    CouponAssociationSchema,
    { ...scope, subscription_id: subscriptionId, status: 'published' },
    { orderBy: { created_at: 'asc', id: 'asc' } },
  )
  if (associations.length === 0) return []
  // Archived coupons still discount the subscriptions that redeemed them.
  const coupons = new Map((await em.find(CouponSchema, { ...scope, id: { $in: associations.map((a) => a.coupon_id) } })).map((c) => [c.id, c]))
  const rows = await em.getConnection().execute<{ id: string; n: string }[]>(
    TIMES_APPLIED_SQL, [scope.tenant_id, scope.environment_id, associations.map((a) => a.id), exceptInvoiceId], 'all', em.getTransactionContext(),
  )
  const times = new Map(rows.map((r) => [r.id, Number(r.n)]))
  return associations
    .filter((a) => coupons.get(a.coupon_id)?.status !== 'deleted' && coupons.has(a.coupon_id))
    .map((association) => ({ association, coupon: coupons.get(association.coupon_id)!, timesApplied: times.get(association.id) ?? 0 }))
}
