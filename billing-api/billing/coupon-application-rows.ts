// Writes the CouponApplication rows of a computed coupon plan (apply-coupons.ts) under an
// invoice whose lines are already created. Used by every subscription invoice that applies
// coupons (cycle/create: service.ts; a cancellation's PRORATION invoice: subscriptions/final-invoice.ts).
import type { EntityManager } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { PlannedCouponApplication } from './apply-coupons.js'
import { CouponApplicationSchema } from '../invoices/amounts.entity.js'
import type { Invoice } from '../invoices/invoice.entity.js'

/** `lineIds[i]` is the id of the invoice line the plan's lineIndex i refers to. */
export function writeCouponApplications(
  tx: EntityManager, invoice: Invoice, subscriptionId: string, applications: PlannedCouponApplication[], lineIds: string[], appliedAt: Date,
): void {
  const scope: Scope = { tenant_id: invoice.tenant_id, environment_id: invoice.environment_id }
  for (const a of applications) {
    const { coupon, association } = a.attached
    tx.create(CouponApplicationSchema, {
      id: newId('coupon_app'), ...scope, invoice_id: invoice.id, invoice_line_item_id: a.lineIndex === null ? null : lineIds[a.lineIndex],
      subscription_id: subscriptionId, coupon_id: coupon.id, coupon_association_id: association.id, currency: invoice.currency, applied_at: appliedAt,
      coupon_snapshot: {
        id: coupon.id, name: coupon.name, type: coupon.type, amount_off: coupon.amount_off, percentage_off: coupon.percentage_off,
        currency: coupon.currency, duration: coupon.duration, duration_in_periods: coupon.duration_in_periods,
      },
      discount_percentage: a.discount_percentage, discounted_amount: a.discounted_amount, original_price: a.original_price,
      final_price: a.final_price, status: 'published', metadata: {},
    })
  }
}
