// The invoice of a period cut short by a cancellation, for [current_period_start, end):
// arrear usage measured for exactly that window, arrear recurring fixed charges prorated,
// one-time arrear charges in full, and a negative credit line for the unused part of every
// recurring ADVANCE fixed charge already billed for the whole period. Billing reason
// PRORATION; idempotent by the same key scheme and unique index as every subscription invoice.
// A negative net (more credited than used) stays on the invoice as its total with amount_due
// 0: credit notes and wallet refunds are not part of this service yet.
import type { EntityManager } from '@mikro-orm/postgresql'
import { UniqueConstraintViolationException } from '@mikro-orm/core'
import type { Scope } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { InvoiceLineItemSchema, InvoiceSchema, type Invoice } from '../invoices/invoice.entity.js'
import { computeSubscriptionInvoice, invoiceIdempotencyKey } from '../invoices/service.js'
import { writeSubscriptionInvoice } from '../invoices/subscription-invoice-rows.js'
import { PriceSchema } from '../plans/price.entity.js'
import { D, toMoneyString } from '../pricing/index.js'
import { proratedAmount, splitBilledAmount } from './proration.js'
import { SubscriptionLineItemSchema, type Subscription } from './subscription.entity.js'

export interface FinalLine {
  subscription_line_item_id: string
  price_id: string
  price_type: string
  meter_id: string | null
  display_name: string | null
  quantity: string
  amount: string
  period_start: Date
  period_end: Date
}

/** Reads only: the lines of the partial-period invoice. `sub.end_date` must already be `end`. */
export async function computeProrationLines(ctx: BillingContext, em: EntityManager, sub: Subscription, end: Date): Promise<FinalLine[]> {
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const { current_period_start: start, current_period_end: periodEnd, currency } = sub
  // With end_date = end the cycle rules give the arrear charges of [start, end) and no advance ones.
  const computed = await computeSubscriptionInvoice(ctx, em, sub, start, end, 'PRORATION')
  const lines: FinalLine[] = computed.lines.map((l) => ({
    subscription_line_item_id: l.lineItem.id, price_id: l.price.id, price_type: l.price.type, meter_id: l.price.meter_id,
    display_name: l.lineItem.display_name, quantity: l.quantity, period_start: l.periodStart, period_end: l.periodEnd,
    amount: l.price.type === 'FIXED' && l.price.billing_period !== 'ONETIME' ? proratedAmount(l.amount, start, periodEnd, end, currency) : l.amount,
  }))
  // Advance charges billed up to the period end: for the whole period by the previous cycle
  // invoice, or from a quantity change on (modify.ts) for the rest of it.
  const billed = await em.find(InvoiceLineItemSchema, {
    subscription_id: sub.id, ...scope, status: 'published', price_type: 'FIXED', period_start: { $gte: start, $lt: periodEnd }, period_end: periodEnd,
  }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const liveInvoices = new Set(
    (await em.find(InvoiceSchema, { id: { $in: billed.map((b) => b.invoice_id) }, ...scope, invoice_status: { $ne: 'VOIDED' }, status: { $ne: 'deleted' } })).map((i) => i.id),
  )
  const prices = new Map((await em.find(PriceSchema, { id: { $in: billed.map((b) => b.price_id!).filter(Boolean) }, ...scope })).map((p) => [p.id, p]))
  const subLines = new Map((await em.find(SubscriptionLineItemSchema, { subscription_id: sub.id, ...scope })).map((l) => [l.id, l]))
  for (const b of billed) {
    const price = b.price_id ? prices.get(b.price_id) : undefined
    if (!liveInvoices.has(b.invoice_id) || !price || price.invoice_cadence !== 'ADVANCE' || price.billing_period === 'ONETIME') continue
    if (D(b.amount).lte(0)) continue
    // A line item replaced by a quantity change had its unused part credited by that change.
    if (b.subscription_line_item_id && subLines.get(b.subscription_line_item_id)?.status === 'archived') continue
    const { credit } = splitBilledAmount(b.amount, b.period_start ?? start, periodEnd, end, currency)
    if (D(credit).isZero()) continue
    lines.push({
      subscription_line_item_id: b.subscription_line_item_id!, price_id: price.id, price_type: 'FIXED', meter_id: null,
      display_name: `Unused time: ${subLines.get(b.subscription_line_item_id ?? '')?.display_name ?? b.display_name ?? price.id}`,
      quantity: b.quantity, amount: toMoneyString(D(credit).negated(), currency), period_start: end, period_end: periodEnd,
    })
  }
  return lines
}

/** Persists the partial-period invoice once (a savepoint; a lost race returns the winner). */
export async function createProrationInvoice(ctx: BillingContext, em: EntityManager, sub: Subscription, end: Date): Promise<Invoice> {
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const start = sub.current_period_start
  const key = invoiceIdempotencyKey(sub.id, 'PRORATION', start, end)
  const live = { ...scope, idempotency_key: key, invoice_status: { $ne: 'VOIDED' as const }, status: { $ne: 'deleted' } }
  const existing = await em.findOne(InvoiceSchema, live)
  if (existing) return existing
  const lines = await computeProrationLines(ctx, em, sub, end)
  const net = lines.reduce((sum, l) => sum.plus(l.amount), D(0))
  const total = toMoneyString(net, sub.currency)
  try {
    return await em.transactional(async (tx) => writeSubscriptionInvoice(tx, {
      subscription: sub, billingReason: 'PRORATION', periodStart: start, periodEnd: end, idempotencyKey: key,
      subtotal: total, total, now: ctx.clock.now(),
    }, lines).invoice)
  } catch (err) {
    if (!(err instanceof UniqueConstraintViolationException)) throw err
    return em.findOneOrFail(InvoiceSchema, live)
  }
}
