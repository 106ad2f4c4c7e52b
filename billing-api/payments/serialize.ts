// Wire forms of refunds and payment failures.
import { iso, serializeBase } from '../db/common.js'
import type { InvoiceRefund, PaymentFailure } from './payments.entity.js'

export function serializeRefund(r: InvoiceRefund) {
  return {
    ...serializeBase(r), invoice_id: r.invoice_id, payment_id: r.payment_id, amount: r.amount, excess_amount: r.excess_amount,
    credited_amount: r.credited_amount, currency: r.currency, reason: r.reason, reference: r.reference,
    idempotency_key: r.idempotency_key, credit_note_id: r.credit_note_id, refunded_at: r.refunded_at.toISOString(),
  }
}

/** Safe before the first flush (no common timestamps). */
export function serializeFailure(f: PaymentFailure) {
  return {
    id: f.id, invoice_id: f.invoice_id, attempt: f.attempt, failure_code: f.failure_code, reason: f.reason,
    idempotency_key: f.idempotency_key, failed_at: f.failed_at.toISOString(), next_retry_at: iso(f.next_retry_at),
    created_at: iso(f.created_at ?? null),
  }
}
