import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, text, timestamp, type BaseRecord } from '../db/common.js'

export const CREDIT_NOTE_REASONS = [
  'DUPLICATE', 'FRAUDULENT', 'ORDER_CHANGE', 'UNSATISFACTORY', 'SERVICE_ISSUE', 'BILLING_ERROR', 'SUBSCRIPTION_CANCELLATION',
] as const
export type CreditNoteReason = (typeof CREDIT_NOTE_REASONS)[number]
export type CreditNoteStatus = 'DRAFT' | 'FINALIZED' | 'VOIDED'

export interface CreditNote extends BaseRecord {
  invoice_id: string
  customer_id: string
  subscription_id: string | null
  credit_note_number: string
  credit_note_status: CreditNoteStatus
  /** ADJUSTMENT only: a note lowers what is still owed; what was paid is refunded (payments/refunds.ts) */
  credit_note_type: 'ADJUSTMENT'
  reason: CreditNoteReason
  memo: string | null
  currency: string
  total_amount: string
  idempotency_key: string | null
  finalized_at: Date | null
  voided_at: Date | null
}

export const CreditNoteSchema = new EntitySchema<CreditNote>({
  name: 'CreditNote',
  tableName: 'credit_notes',
  properties: {
    ...baseColumns<CreditNote>(),
    invoice_id: text(),
    customer_id: text(),
    subscription_id: text(true),
    credit_note_number: text(),
    credit_note_status: text(),
    credit_note_type: text(),
    reason: text(),
    memo: text(true),
    currency: text(),
    total_amount: decimal(),
    idempotency_key: text(true),
    finalized_at: timestamp(true),
    voided_at: timestamp(true),
  },
})

export interface CreditNoteLineItem extends BaseRecord {
  credit_note_id: string
  invoice_line_item_id: string
  display_name: string | null
  amount: string
  currency: string
}

export const CreditNoteLineItemSchema = new EntitySchema<CreditNoteLineItem>({
  name: 'CreditNoteLineItem',
  tableName: 'credit_note_line_items',
  properties: {
    ...baseColumns<CreditNoteLineItem>(),
    credit_note_id: text(),
    invoice_line_item_id: text(),
    display_name: text(true),
    amount: decimal(),
    currency: text(),
  },
})
