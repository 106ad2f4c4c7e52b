// GET /invoices/{id}/lines/{line_id}/explain: why a usage line has its quantity and amount.
// - quantity: the meter, the line's period and customers (a parent pools its inherited
//   children), the usage per window from the meter buckets (meters/service.ts meterUsage, the
//   read the invoice made), and a page of the raw events behind it (keyset cursor);
// - amount: the invoice is recomputed through the same code that made it
//   (computeSubscriptionInvoice -> charges.ts priceCharges -> pricing/), and the line's tiers,
//   proration, commitment, coupons, credits and the invoice's taxes are shown. amount_matches
//   tells whether the recomputed amount is the stored one (it differs when events arrived
//   after the invoice was computed, or prices changed). Invoices whose reason the recompute
//   does not cover (cancellation and modification prorations) are explained from the stored
//   quantity through the pricing engine alone.
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, NotFoundError } from '../../platform/errors.js'
import { meterEventsPage } from '../../clickhouse/queries/meter-events-page.js'
import type { WindowSize } from '../../clickhouse/queries/meter-usage.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { findInScope } from '../db/scoped-records.js'
import { InvoiceLineItemSchema, InvoiceSchema } from '../invoices/invoice.entity.js'
import { invoiceAmountRecords, serializeAppliedTax, serializeCouponApplication } from '../invoices/index.js'
import { MeterSchema } from '../meters/meter.entity.js'
import { meterUsage, usageReader } from '../meters/index.js'
import { PriceSchema } from '../plans/price.entity.js'
import { usageCustomersByWindow } from '../subscriptions/index.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import type { BillingReason } from './charges.js'
import { decodeCursor, encodeCursor, pricingSteps, sameAmount } from './explain-steps.js'
import { computeSubscriptionInvoice } from './subscription-invoice.js'

const RECOMPUTABLE: readonly string[] = ['SUBSCRIPTION_CYCLE', 'SUBSCRIPTION_CREATE', 'AUTO_INVOICE_THRESHOLD']

export interface ExplainOptions {
  window_size: WindowSize
  events_limit: number
  events_cursor?: string
}

export async function explainLine(ctx: BillingContext, em: EntityManager, scope: Scope, invoiceId: string, lineId: string, opts: ExplainOptions) {
  const invoice = await findInScope(em, InvoiceSchema, scope, invoiceId, 'invoice')
  const line = await em.findOne(InvoiceLineItemSchema, { id: lineId, invoice_id: invoiceId, ...scope, status: { $ne: 'deleted' } })
  if (!line) throw new NotFoundError('invoice line item', lineId)
  if (line.price_type !== 'USAGE' || !line.meter_id || !line.price_id || !line.period_start || !line.period_end || !line.subscription_id) {
    throw new InvalidOperationError(`line ${lineId} is not a usage line of a subscription; only usage lines have an explain trail`)
  }
  const after = opts.events_cursor ? decodeCursor(opts.events_cursor) : undefined
  const [meter, price, sub] = await Promise.all([
    em.findOneOrFail(MeterSchema, { id: line.meter_id, ...scope }),
    em.fork().findOneOrFail(PriceSchema, { id: line.price_id, ...scope }),
    em.fork().findOneOrFail(SubscriptionSchema, { id: line.subscription_id, ...scope }),
  ])
  const start = line.period_start
  const end = line.period_end
  const customers = await usageCustomersByWindow(em.fork(), sub)(start, end)
  const usage = await meterUsage(usageReader(ctx), meter, {
    external_customer_ids: customers, start_time: start.toISOString(), end_time: end.toISOString(), window_size: opts.window_size,
  })
  const rows = await meterEventsPage(ctx.ch, {
    tenantId: scope.tenant_id, environmentId: scope.environment_id, meterId: meter.id, externalCustomerIds: customers, start, end,
    after, limit: opts.events_limit + 1,
  })
  const page = rows.slice(0, opts.events_limit)
  const last = page[page.length - 1]

  let recomputed = null
  if (RECOMPUTABLE.includes(invoice.billing_reason) && invoice.period_start && invoice.period_end) {
    const computed = await computeSubscriptionInvoice(ctx, em.fork(), sub, invoice.period_start, invoice.period_end, invoice.billing_reason as BillingReason, invoice.id)
    recomputed = computed.lines.find((l) => l.lineItem.id === line.subscription_line_item_id && l.price.id === line.price_id && l.periodStart.getTime() === start.getTime()) ?? null
  }
  const priced = recomputed ?? {
    quantity: line.adjusted_entitlement_quantity ?? line.quantity, share: undefined, threshold_billed: undefined,
    commitment_info: line.commitment_info ?? null, amount: line.amount,
  }
  const steps = pricingSteps(price, priced, invoice.currency)
  const records = await invoiceAmountRecords(em, scope, invoiceId)
  return {
    invoice_id: invoice.id, line_id: line.id, display_name: line.display_name, currency: invoice.currency, billing_reason: invoice.billing_reason,
    meter: { id: meter.id, name: meter.name, event_name: meter.event_name, aggregation: meter.aggregation },
    period: { start: start.toISOString(), end: end.toISOString() },
    external_customer_ids: customers,
    quantity: {
      /** what the meter measured over the period, now */
      measured: usage.value,
      event_count: usage.event_count,
      /** as stored on the line: measured, and priced after entitlement caps */
      line_quantity: line.quantity,
      priced_quantity: priced.quantity,
      window_size: opts.window_size,
      buckets: usage.items.map((i) => ({ window_start: i.window_start, value: i.value, event_count: i.event_count })),
    },
    pricing: {
      price_id: price.id, ...steps,
      recomputed: recomputed !== null,
    },
    discounts: {
      line_item_discount: line.line_item_discount,
      invoice_level_discount: line.invoice_level_discount,
      coupon_applications: records.couponApplications.filter((a) => a.invoice_line_item_id === line.id || a.invoice_line_item_id === null).map(serializeCouponApplication),
    },
    prepaid_credits_applied: line.prepaid_credits_applied,
    /** taxes apply to the invoice (subtotal - discounts), not to one line */
    invoice_taxes: records.taxes.map(serializeAppliedTax),
    amount: line.amount,
    explained_amount: steps.amount,
    amount_matches: sameAmount(steps.amount, line.amount),
    events: {
      items: page.map((r) => ({
        event_id: r.event_id, external_customer_id: r.external_customer_id, timestamp: new Date(Number(r.timestamp_ms)).toISOString(),
        value: r.value, source: r.source,
      })),
      next_cursor: rows.length > opts.events_limit && last ? encodeCursor({ timestampMs: Number(last.timestamp_ms), eventId: last.event_id }) : null,
    },
  }
}
