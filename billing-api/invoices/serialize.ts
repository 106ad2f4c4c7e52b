// Wire forms of invoices and payments, and the payload of invoice system events.
import { iso, serializeBase } from '../db/common.js'
import { INVOICE_AMOUNT_FIELDS, type Invoice, type InvoiceLineItem } from './invoice.entity.js'
import type { InvoicePayment } from './payment.entity.js'

export function serializeInvoice(inv: Invoice, lines?: InvoiceLineItem[]) {
  return {
    ...serializeBase(inv),
    customer_id: inv.customer_id, subscription_id: inv.subscription_id, invoice_type: inv.invoice_type,
    invoice_status: inv.invoice_status, payment_status: inv.payment_status, currency: inv.currency,
    billing_reason: inv.billing_reason, billing_period: inv.billing_period,
    ...Object.fromEntries(INVOICE_AMOUNT_FIELDS.map((f) => [f, inv[f]])),
    invoice_number: inv.invoice_number, billing_sequence: inv.billing_sequence, idempotency_key: inv.idempotency_key,
    description: inv.description, period_start: iso(inv.period_start), period_end: iso(inv.period_end),
    issue_date: iso(inv.issue_date), due_date: iso(inv.due_date), finalized_at: iso(inv.finalized_at), paid_at: iso(inv.paid_at),
    voided_at: iso(inv.voided_at), last_computed_at: iso(inv.last_computed_at), version: inv.version,
    ...(lines
      ? {
          line_items: lines.map((l) => ({
            ...serializeBase(l), invoice_id: l.invoice_id, customer_id: l.customer_id, subscription_id: l.subscription_id,
            subscription_line_item_id: l.subscription_line_item_id, price_id: l.price_id, price_type: l.price_type,
            meter_id: l.meter_id, currency: l.currency, display_name: l.display_name, amount: l.amount, quantity: l.quantity,
            period_start: iso(l.period_start), period_end: iso(l.period_end),
          })),
        }
      : {}),
  }
}

export function serializePayment(p: InvoicePayment) {
  return {
    ...serializeBase(p), invoice_id: p.invoice_id, amount: p.amount, currency: p.currency, reference: p.reference,
    idempotency_key: p.idempotency_key, paid_at: p.paid_at.toISOString(),
  }
}

/** Payload of invoice.* system events; safe before the first flush (no common timestamps). */
export function invoiceEventPayload(inv: Invoice) {
  return {
    id: inv.id, customer_id: inv.customer_id, subscription_id: inv.subscription_id, invoice_type: inv.invoice_type,
    invoice_status: inv.invoice_status, payment_status: inv.payment_status, currency: inv.currency,
    billing_reason: inv.billing_reason, invoice_number: inv.invoice_number, billing_sequence: inv.billing_sequence,
    ...Object.fromEntries(INVOICE_AMOUNT_FIELDS.map((f) => [f, inv[f]])),
    period_start: iso(inv.period_start), period_end: iso(inv.period_end), issue_date: iso(inv.issue_date),
    due_date: iso(inv.due_date), finalized_at: iso(inv.finalized_at), paid_at: iso(inv.paid_at), voided_at: iso(inv.voided_at),
  }
}
