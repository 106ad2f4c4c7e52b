// Response schemas of the refund, payment failure and payment link routes (registered by module.ts).
import { dateTimeOrNull, dateTimeString, integer, objectOf, recordSchema, ref, str, stringOrNull, bool, money } from '../http/response-schemas.js'

export const invoiceRefundSchema = recordSchema('InvoiceRefund', {
  invoice_id: str,
  payment_id: stringOrNull,
  amount: money,
  excess_amount: money,
  credited_amount: money,
  currency: str,
  reason: stringOrNull,
  reference: stringOrNull,
  idempotency_key: stringOrNull,
  credit_note_id: stringOrNull,
  refunded_at: dateTimeString,
})

export const paymentFailureSchema = {
  $id: 'PaymentFailure',
  ...objectOf({
    id: str,
    invoice_id: str,
    attempt: integer,
    failure_code: stringOrNull,
    reason: str,
    idempotency_key: stringOrNull,
    failed_at: dateTimeString,
    next_retry_at: dateTimeOrNull,
    created_at: dateTimeOrNull,
  }),
}

export const refundResultSchema = objectOf({
  refund: ref('InvoiceRefund'),
  invoice: ref('Invoice'),
  /** the credit note for the part refunded as credit, with its lines */
  credit_note: { anyOf: [ref('Invoice'), { type: 'null' }] },
  replayed: bool,
})

export const failureResultSchema = objectOf({ failure: ref('PaymentFailure'), invoice: ref('Invoice'), replayed: bool })

export const paymentLinkSchema = objectOf({
  invoice_id: str,
  provider: str,
  provider_session_id: str,
  mode: str,
  amount: money,
  currency: str,
  url: str,
})

export const invoicePaymentsSchema = objectOf({
  invoice_id: str,
  payments: { type: 'array', items: ref('InvoicePayment') },
  refunds: { type: 'array', items: ref('InvoiceRefund') },
  failures: { type: 'array', items: ref('PaymentFailure') },
})
