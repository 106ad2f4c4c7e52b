import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, text, timestamp, type BaseRecord } from '../db/common.js'

/** One payment recorded against an invoice (table invoice_payments). */
export interface InvoicePayment extends BaseRecord {
  invoice_id: string
  amount: string
  currency: string
  reference: string | null
  idempotency_key: string | null
  paid_at: Date
}

export const InvoicePaymentSchema = new EntitySchema<InvoicePayment>({
  name: 'InvoicePayment',
  tableName: 'invoice_payments',
  properties: {
    ...baseColumns<InvoicePayment>(),
    invoice_id: text(),
    amount: decimal(),
    currency: text(),
    reference: text(true),
    idempotency_key: text(true),
    paid_at: timestamp(),
  },
})
