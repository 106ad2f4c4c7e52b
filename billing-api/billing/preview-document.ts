// A computed period invoice (nothing stored) in the Invoice shape, for POST /invoices/preview
// (schema: invoices/response-schemas.ts InvoicePreviewDocument). As at draft computation, only
// coupons apply: taxes and prepaid credits wait for finalization, so the preview has none.
import type { Scope } from '../db/scope.js'
import { toMoneyString } from '../pricing/index.js'
import type { ComputedInvoice } from './subscription-invoice.js'

const unsaved = (scope: Scope) => ({
  id: null, ...scope, status: null, metadata: {}, created_at: null, updated_at: null, created_by: null, updated_by: null,
})

export function serializePreviewDocument(c: ComputedInvoice, scope: Scope, computedAt: Date) {
  const sub = c.subscription
  const zero = toMoneyString('0', sub.currency)
  const iso = (d: Date) => d.toISOString()
  return {
    ...unsaved(scope),
    customer_id: sub.customer_id, subscription_id: sub.id, subscription_customer_id: sub.customer_id,
    invoice_type: 'SUBSCRIPTION', invoice_status: 'DRAFT', payment_status: 'PENDING', currency: sub.currency,
    billing_reason: c.reason, billing_period: sub.billing_period,
    subtotal: c.subtotal, total_discount: c.total_discount, total_tax: zero, total_prepaid_credits_applied: zero, adjustment_amount: zero,
    total: c.total, amount_due: c.total, amount_paid: zero, amount_remaining: c.total, overpaid_amount: zero, refunded_amount: zero,
    invoice_number: null, billing_sequence: null, idempotency_key: null, description: null,
    period_start: iso(c.periodStart), period_end: iso(c.periodEnd),
    issue_date: null, due_date: null, finalized_at: null, paid_at: null, voided_at: null, last_computed_at: iso(computedAt),
    version: null, invoice_pdf_url: null,
    line_items: c.lines.map((l) => ({
      ...unsaved(scope), invoice_id: null, customer_id: sub.customer_id, subscription_id: sub.id,
      subscription_line_item_id: l.lineItem.id, price_id: l.price.id, price_type: l.price.type, meter_id: l.price.meter_id,
      currency: sub.currency, display_name: l.lineItem.display_name, amount: toMoneyString(l.amount, sub.currency),
      quantity: l.measured_quantity ?? l.quantity, adjusted_entitlement_quantity: l.price.type === 'USAGE' ? l.quantity : null,
      line_item_discount: toMoneyString(l.line_item_discount, sub.currency), invoice_level_discount: toMoneyString(l.invoice_level_discount, sub.currency),
      prepaid_credits_applied: zero, usage_analytics: null, usage_breakdown: null, commitment_info: l.commitment_info ?? null,
      period_start: iso(l.periodStart), period_end: iso(l.periodEnd),
      entity_id: null, entity_type: null, meter_display_name: null, plan_display_name: null, price_unit: null, price_unit_id: null, price_unit_amount: null,
    })),
    coupon_applications: null, taxes: [], customer: null, subscription: null,
  }
}
