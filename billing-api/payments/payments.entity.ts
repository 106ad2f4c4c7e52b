import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, integer, text, timestamp, type BaseRecord } from '../db/common.js'

/** One refund of an invoice (table invoice_refunds, migrations/0001_refunds_failures.sql). */
export interface InvoiceRefund extends BaseRecord {
  invoice_id: string
  payment_id: string | null
  amount: string
  excess_amount: string
  credited_amount: string
  currency: string
  reason: string | null
  reference: string | null
  idempotency_key: string | null
  credit_note_id: string | null
  refunded_at: Date
}

export const InvoiceRefundSchema = new EntitySchema<InvoiceRefund>({
  name: 'InvoiceRefund',
  tableName: 'invoice_refunds',
  properties: {
    ...baseColumns<InvoiceRefund>(),
    invoice_id: text(),
    payment_id: text(true),
    amount: decimal(),
    excess_amount: decimal(),
    credited_amount: decimal(),
    currency: text(),
    reason: text(true),
    reference: text(true),
    idempotency_key: text(true),
    credit_note_id: text(true),
    refunded_at: timestamp(),
  },
})

/** One failed payment attempt of an invoice (table invoice_payment_failures). */
export interface PaymentFailure extends BaseRecord {
  invoice_id: string
  attempt: number
  failure_code: string | null
  reason: string | null
  idempotency_key: string | null
  failed_at: Date
  next_retry_at: Date | null
}

export const PaymentFailureSchema = new EntitySchema<PaymentFailure>({
  name: 'PaymentFailure',
  tableName: 'invoice_payment_failures',
  properties: {
    ...baseColumns<PaymentFailure>(),
    invoice_id: text(),
    attempt: integer(),
    failure_code: text(true),
    reason: text(true),
    idempotency_key: text(true),
    failed_at: timestamp(),
    next_retry_at: timestamp(true),
  },
})
