// Wire forms of invoices and payments, and the payload of invoice system events.
import { iso, serializeBase } from '../db/common.js'
import { toMoneyString } from '../pricing/index.js'
import { INVOICE_AMOUNT_FIELDS, type Invoice, type InvoiceLineItem } from './invoice.entity.js'
import type { InvoicePayment } from './payment.entity.js'
import type { CouponApplication } from './amounts.entity.js'
import type { AppliedTaxView } from './amount-records.js'
import { serializeTaxRate } from '../taxes/index.js'

/** The invoice's coupon applications and applied taxes (amount-records.ts), when loaded. */
export interface InvoiceAmountRecords {
  couponApplications: CouponApplication[]
  taxes: AppliedTaxView[]
}

/** The invoice's PDF document (document-routes.ts), relative to the API's base address. */
export const invoicePdfPath = (id: string): string => `/v1/invoices/${id}/pdf`

/** The invoice's amount fields, each in its currency's minor units. */
function invoiceAmounts(inv: Invoice): Record<string, string> {
  return Object.fromEntries(INVOICE_AMOUNT_FIELDS.map((f) => [f, toMoneyString(inv[f] ?? '0', inv.currency)]))
}

export function serializeInvoice(inv: Invoice, lines?: InvoiceLineItem[], records?: InvoiceAmountRecords) {
  return {
    ...serializeBase(inv),
    customer_id: inv.customer_id, subscription_id: inv.subscription_id, subscription_customer_id: inv.subscription_customer_id ?? null,
    invoice_type: inv.invoice_type,
    invoice_status: inv.invoice_status, payment_status: inv.payment_status, currency: inv.currency,
    billing_reason: inv.billing_reason, billing_period: inv.billing_period,
    ...invoiceAmounts(inv),
    invoice_number: inv.invoice_number, billing_sequence: inv.billing_sequence, idempotency_key: inv.idempotency_key,
    description: inv.description, period_start: iso(inv.period_start), period_end: iso(inv.period_end),
    issue_date: iso(inv.issue_date), due_date: iso(inv.due_date), finalized_at: iso(inv.finalized_at), paid_at: iso(inv.paid_at),
    voided_at: iso(inv.voided_at), last_computed_at: iso(inv.last_computed_at), version: inv.version,
    invoice_pdf_url: invoicePdfPath(inv.id),
    line_items: lines
      ? lines.map((l) => ({
          ...serializeBase(l), invoice_id: l.invoice_id, customer_id: l.customer_id, subscription_id: l.subscription_id,
          subscription_line_item_id: l.subscription_line_item_id, price_id: l.price_id, price_type: l.price_type,
          meter_id: l.meter_id, currency: l.currency, display_name: l.display_name, amount: toMoneyString(l.amount, l.currency), quantity: l.quantity,
          adjusted_entitlement_quantity: l.adjusted_entitlement_quantity ?? null,
          line_item_discount: toMoneyString(l.line_item_discount ?? '0', l.currency), invoice_level_discount: toMoneyString(l.invoice_level_discount ?? '0', l.currency),
          prepaid_credits_applied: toMoneyString(l.prepaid_credits_applied ?? '0', l.currency),
          usage_analytics: l.usage_analytics ?? null, usage_breakdown: l.usage_breakdown ?? null,
          commitment_info: l.commitment_info ?? null, // commitments (helper C1)
          period_start: iso(l.period_start), period_end: iso(l.period_end),
          entity_id: null, entity_type: null, meter_display_name: null, plan_display_name: null,
          price_unit: null, price_unit_id: null, price_unit_amount: null,
        }))
      : null,
    coupon_applications: records ? records.couponApplications.map(serializeCouponApplication) : null,
    taxes: records ? records.taxes.map(serializeAppliedTax) : null,
    // filled by POST /invoices/search with expand (search-expand.ts)
    customer: null as unknown,
    subscription: null as unknown,
  }
}

export function serializeCouponApplication(a: CouponApplication) {
  return {
    ...serializeBase(a), invoice_id: a.invoice_id, invoice_line_item_id: a.invoice_line_item_id, subscription_id: a.subscription_id,
    coupon_id: a.coupon_id, coupon_association_id: a.coupon_association_id, currency: a.currency, applied_at: a.applied_at.toISOString(),
    coupon_snapshot: a.coupon_snapshot, discount_percentage: a.discount_percentage, discounted_amount: toMoneyString(a.discounted_amount, a.currency),
    original_price: toMoneyString(a.original_price, a.currency), final_price: toMoneyString(a.final_price, a.currency),
  }
}

export function serializeAppliedTax(t: AppliedTaxView) {
  const r = t.tax_rate
  return {
    ...serializeBase(t), entity_type: t.entity_type, entity_id: t.entity_id, tax_rate_id: t.tax_rate_id,
    tax_association_id: t.tax_association_id, currency: t.currency, idempotency_key: t.idempotency_key,
    tax_amount: toMoneyString(t.tax_amount, t.currency), taxable_amount: toMoneyString(t.taxable_amount, t.currency), applied_at: t.applied_at.toISOString(),
    tax_rate: r ? serializeTaxRate(r) : null,
  }
}

export function serializePayment(p: InvoicePayment) {
  return {
    ...serializeBase(p), invoice_id: p.invoice_id, amount: toMoneyString(p.amount, p.currency), currency: p.currency, reference: p.reference,
    idempotency_key: p.idempotency_key, paid_at: p.paid_at.toISOString(),
  }
}

/** Payload of invoice.* system events; safe before the first flush (no common timestamps). */
export function invoiceEventPayload(inv: Invoice) {
  return {
    id: inv.id, customer_id: inv.customer_id, subscription_id: inv.subscription_id, invoice_type: inv.invoice_type,
    invoice_status: inv.invoice_status, payment_status: inv.payment_status, currency: inv.currency,
    billing_reason: inv.billing_reason, invoice_number: inv.invoice_number, billing_sequence: inv.billing_sequence,
    ...invoiceAmounts(inv),
    period_start: iso(inv.period_start), period_end: iso(inv.period_end), issue_date: iso(inv.issue_date),
    due_date: iso(inv.due_date), finalized_at: iso(inv.finalized_at), paid_at: iso(inv.paid_at), voided_at: iso(inv.voided_at),
  }
}
