// Subscription invoice use cases: preview (no writes) and create (idempotent per
// subscription, billing reason and period at minute precision).
import type { EntityManager } from '@mikro-orm/postgresql'
import { UniqueConstraintViolationException } from '@mikro-orm/core'
import { D, toMoneyString } from '../pricing/index.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/publish.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { MeterSchema } from '../meters/meter.entity.js'
import { meterUsage } from '../meters/service.js'
import { PriceSchema } from '../plans/price.entity.js'
import { minuteKey } from '../subscriptions/periods.js'
import { SubscriptionLineItemSchema, type Subscription } from '../subscriptions/subscription.entity.js'
import { chargesForPeriod, priceCharges, type BillingReason, type PricedLine } from './charges.js'
import { InvoiceLineItemSchema, InvoiceSchema, type Invoice, type InvoiceLineItem } from './invoice.entity.js'
import { invoiceEventPayload } from './serialize.js'
import { findInScope } from '../db/scoped-records.js'

export interface ComputedInvoice {
  subscription: Subscription
  reason: BillingReason
  periodStart: Date
  periodEnd: Date
  lines: PricedLine[]
  subtotal: string
}

export function invoiceIdempotencyKey(subscriptionId: string, reason: BillingReason, start: Date, end: Date): string {
  return `${subscriptionId}:${reason}:${minuteKey(start)}:${minuteKey(end)}`
}

/** Computes (reads only) the invoice of a subscription for [start, end). */
export async function computeSubscriptionInvoice(
  ctx: BillingContext, em: EntityManager, sub: Subscription, periodStart: Date, periodEnd: Date, reason: BillingReason,
): Promise<ComputedInvoice> {
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const lineItems = await em.find(SubscriptionLineItemSchema, { subscription_id: sub.id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const prices = await em.find(PriceSchema, { id: { $in: lineItems.map((l) => l.price_id) }, ...scope })
  const byId = new Map(prices.map((p) => [p.id, p]))
  const charges = chargesForPeriod(sub, lineItems.map((lineItem) => ({ lineItem, price: byId.get(lineItem.price_id)! })), periodStart, periodEnd, reason)
  const customer = await em.findOneOrFail(CustomerSchema, { id: sub.customer_id, ...scope })
  const measured = await Promise.all(
    charges.map(async (c) => {
      if (c.price.type !== 'USAGE') return { ...c, quantity: c.lineItem.quantity }
      const meter = await em.findOneOrFail(MeterSchema, { id: c.price.meter_id!, ...scope })
      const usage = await meterUsage(ctx.ch, meter, {
        external_customer_id: customer.external_id,
        start_time: c.periodStart.toISOString(),
        end_time: c.periodEnd.toISOString(),
      })
      return { ...c, quantity: usage.value }
    }),
  )
  const { lines, subtotal } = priceCharges(measured, sub.currency)
  return { subscription: sub, reason, periodStart, periodEnd, lines, subtotal }
}

/**
 * Persists the invoice for [start, end) once. A concurrent or repeated call for the same
 * key returns the invoice that won (the partial unique index decides, not a read-then-write).
 */
export async function createSubscriptionInvoice(
  ctx: BillingContext, em: EntityManager, sub: Subscription, periodStart: Date, periodEnd: Date, reason: BillingReason,
): Promise<Invoice> {
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const key = invoiceIdempotencyKey(sub.id, reason, periodStart, periodEnd)
  const existing = await em.findOne(InvoiceSchema, { ...scope, idempotency_key: key, invoice_status: { $ne: 'VOIDED' }, status: { $ne: 'deleted' } })
  if (existing) return existing
  const computed = await computeSubscriptionInvoice(ctx, em, sub, periodStart, periodEnd, reason)
  try {
    // Inside a caller's transaction this is a savepoint, so a lost race rolls back only itself.
    return await em.transactional(async (tx) => {
      const zero = D(computed.subtotal).isZero()
      // Every amount prints in the currency's decimals, zeros too ("0.00").
      const none = toMoneyString('0', sub.currency)
      const invoice = tx.create(InvoiceSchema, {
        id: newId('inv'), ...scope, customer_id: sub.customer_id, subscription_id: sub.id, invoice_type: 'SUBSCRIPTION',
        // A zero-amount subscription invoice needs no payment: SKIPPED (spec).
        invoice_status: zero ? 'SKIPPED' : 'DRAFT', payment_status: zero ? 'SUCCEEDED' : 'PENDING', currency: sub.currency,
        billing_reason: reason, billing_period: sub.billing_period, period_start: periodStart, period_end: periodEnd,
        subtotal: computed.subtotal, total_discount: none, total_tax: none, total_prepaid_credits_applied: none, adjustment_amount: none,
        total: computed.subtotal, amount_due: computed.subtotal, amount_paid: none, amount_remaining: computed.subtotal,
        overpaid_amount: none, refunded_amount: none, invoice_number: null, billing_sequence: null, idempotency_key: key,
        description: null, issue_date: null, due_date: null, finalized_at: null, paid_at: null, voided_at: null,
        last_computed_at: ctx.clock.now(), status: 'published', metadata: {}, created_by: null, updated_by: null,
      } as any)
      for (const l of computed.lines) {
        tx.create(InvoiceLineItemSchema, {
          id: newId('inv_line'), ...scope, invoice_id: invoice.id, customer_id: sub.customer_id, subscription_id: sub.id,
          subscription_line_item_id: l.lineItem.id, price_id: l.price.id, price_type: l.price.type, meter_id: l.price.meter_id,
          currency: sub.currency, display_name: l.lineItem.display_name, amount: l.amount, quantity: l.quantity,
          period_start: l.periodStart, period_end: l.periodEnd, status: 'published', metadata: {},
        } as any)
      }
      // Once per creation: not for SKIPPED, and a replay or a lost race never reaches here
      // (or rolls back with its savepoint).
      if (!zero) publishSystemEvent(tx, scope, { event_name: 'invoice.drafted', entity_type: 'invoice', entity_id: invoice.id, payload: invoiceEventPayload(invoice) })
      return invoice
    })
  } catch (err) {
    if (!(err instanceof UniqueConstraintViolationException)) throw err
    return em.findOneOrFail(InvoiceSchema, { ...scope, idempotency_key: key, invoice_status: { $ne: 'VOIDED' }, status: { $ne: 'deleted' } })
  }
}

export async function getInvoice(em: EntityManager, scope: Scope, id: string): Promise<{ invoice: Invoice; lines: InvoiceLineItem[] }> {
  const invoice = await findInScope(em, InvoiceSchema, scope, id, 'invoice')
  const lines = await em.find(InvoiceLineItemSchema, { invoice_id: id, ...scope }, { orderBy: { created_at: 'asc', id: 'asc' } })
  return { invoice, lines }
}
