// Reads a subscription's coupon associations with their coupons and how many invoices each has
// already discounted (for the coupon's duration). Reads only.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { CouponSchema } from '../coupons/coupon.entity.js'
import { CouponAssociationSchema } from '../coupons/coupon-association.entity.js'
import type { AttachedCoupon } from './apply-coupons.js'
import { plainFind } from '../db/plain-rows.js'

const TIMES_APPLIED_SQL = `
  SELECT ca.coupon_association_id AS id, count(DISTINCT ca.invoice_id) AS n
    FROM coupon_applications ca JOIN invoices i ON i.id = ca.invoice_id
   WHERE ca.tenant_id = ? AND ca.environment_id = ? AND ca.coupon_association_id IN (?)
     AND i.invoice_status <> 'VOIDED' AND i.status <> 'deleted' AND ca.invoice_id <> ?
   GROUP BY ca.coupon_association_id`

/** In association order (created_at, id); `exceptInvoiceId` is the invoice being recomputed. */
export async function attachedCoupons(em: EntityManager, scope: Scope, subscriptionId: string, exceptInvoiceId = ''): Promise<AttachedCoupon[]> {
  return (await attachedCouponsOf(em, scope, [subscriptionId], exceptInvoiceId)).get(subscriptionId) ?? []
}

/** attachedCoupons of several subscriptions of one scope, in three statements (a billing batch). */
export async function attachedCouponsOf(em: EntityManager, scope: Scope, subscriptionIds: string[], exceptInvoiceId = ''): Promise<Map<string, AttachedCoupon[]>> {
  const bySubscription = new Map<string, AttachedCoupon[]>()
  if (subscriptionIds.length === 0) return bySubscription
  const associations = await plainFind(
    em, CouponAssociationSchema,
    { ...scope, subscription_id: { $in: subscriptionIds }, status: 'published' },
    { orderBy: { created_at: 'asc', id: 'asc' } },
  )
  if (associations.length === 0) return bySubscription
  // Archived coupons still discount the subscriptions that redeemed them.
  const coupons = new Map((await plainFind(em, CouponSchema, { ...scope, id: { $in: [...new Set(associations.map((a) => a.coupon_id))] } })).map((c) => [c.id, c]))
  const rows = await em.getConnection().execute<{ id: string; n: string }[]>(
    TIMES_APPLIED_SQL, [scope.tenant_id, scope.environment_id, associations.map((a) => a.id), exceptInvoiceId], 'all', em.getTransactionContext(),
  )
  const times = new Map(rows.map((r) => [r.id, Number(r.n)]))
  for (const association of associations) {
    const coupon = coupons.get(association.coupon_id)
    if (!coupon || coupon.status === 'deleted') continue
    const list = bySubscription.get(association.subscription_id)
    const attached = { association, coupon, timesApplied: times.get(association.id) ?? 0 }
    if (list) list.push(attached)
    else bySubscription.set(association.subscription_id, [attached])
  }
  return bySubscription
}
