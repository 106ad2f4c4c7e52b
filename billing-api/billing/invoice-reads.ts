// What computing a subscription invoice reads from Postgres, as one interface. The direct
// implementation asks Postgres per invoice (previews, recomputes, lifecycle invoices); a billing
// run's batch implementation (batch-reads.ts) answers from rows loaded once for the whole batch.
// The pricing code is the same for both, so a batch invoice equals its single-invoice preview.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import { PriceSchema, type Price } from '../plans/price.entity.js'
import { SubscriptionLineItemSchema, type Subscription, type SubscriptionLineItem } from '../subscriptions/subscription.entity.js'
import { usageCustomersByWindow } from '../subscriptions/index.js'
import { applyThresholdCuts } from './usage-cuts.js'
import { usageCapsByMeter } from './entitlement-limits.js'
import { attachedCoupons } from './invoice-coupons.js'
import type { AttachedCoupon } from './apply-coupons.js'
import type { BillingReason, Charge } from './charges.js'

export interface InvoiceReads {
  /** published line items, and archived ones that end after `periodStart`, by (created_at, id) */
  lineItems(sub: Subscription, periodStart: Date): Promise<SubscriptionLineItem[]>
  prices(sub: Subscription, ids: string[]): Promise<Price[]>
  meters(sub: Subscription, ids: string[]): Promise<Meter[]>
  /** usage-cuts.ts applyThresholdCuts */
  thresholdCuts(sub: Subscription, charges: Charge[], start: Date, end: Date, reason: BillingReason): Promise<Charge[]>
  /** the external customer ids whose usage the subscription bills for a window (hierarchy pooling) */
  customersOf(sub: Subscription): (start: Date, end: Date) => Promise<string[]>
  /** entitlement-limits.ts usageCapsByMeter */
  caps(sub: Subscription, meterIds: string[], at: Date): Promise<Map<string, string | null>>
  /** invoice-coupons.ts attachedCoupons */
  coupons(scope: Scope, subscriptionId: string, exceptInvoiceId?: string): Promise<AttachedCoupon[]>
}

const scopeOf = (sub: Subscription): Scope => ({ tenant_id: sub.tenant_id, environment_id: sub.environment_id })

/** Per-invoice reads straight from Postgres. */
export function directReads(em: EntityManager): InvoiceReads {
  return {
    lineItems: (sub, periodStart) => em.find(
      SubscriptionLineItemSchema,
      { subscription_id: sub.id, ...scopeOf(sub), $or: [{ status: 'published' }, { status: 'archived', end_date: { $gt: periodStart } }] },
      { orderBy: { created_at: 'asc', id: 'asc' } },
    ),
    prices: (sub, ids) => em.find(PriceSchema, { id: { $in: ids }, ...scopeOf(sub) }),
    meters: async (sub, ids) => (ids.length ? em.find(MeterSchema, { id: { $in: ids }, ...scopeOf(sub) }) : []),
    thresholdCuts: (sub, charges, start, end, reason) => applyThresholdCuts(em, sub, charges, start, end, reason),
    customersOf: (sub) => usageCustomersByWindow(em, sub),
    caps: (sub, meterIds, at) => usageCapsByMeter(em, sub, meterIds, at),
    coupons: (scope, subscriptionId, exceptInvoiceId) => attachedCoupons(em, scope, subscriptionId, exceptInvoiceId),
  }
}
