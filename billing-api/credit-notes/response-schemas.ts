import { alwaysNull, dateTimeOrNull, money, objectOf, recordBaseProperties, recordSchema, str, stringOrNull } from '../http/response-schemas.js'
import { CREDIT_NOTE_REASONS } from './credit-note.entity.js'

const creditNoteLineSchema = objectOf({
  ...recordBaseProperties,
  credit_note_id: str,
  invoice_line_item_id: str,
  display_name: stringOrNull,
  currency: str,
  amount: money,
})

export const creditNoteSchema = recordSchema('CreditNote', {
  invoice_id: str,
  customer_id: str,
  subscription_id: stringOrNull,
  credit_note_number: str,
  credit_note_status: { type: 'string', enum: ['DRAFT', 'FINALIZED', 'VOIDED'] },
  credit_note_type: { type: 'string', enum: ['ADJUSTMENT'] },
  reason: { type: 'string', enum: CREDIT_NOTE_REASONS },
  memo: stringOrNull,
  currency: str,
  idempotency_key: stringOrNull,
  total_amount: money,
  finalized_at: dateTimeOrNull,
  voided_at: dateTimeOrNull,
  line_items: { type: 'array', items: creditNoteLineSchema },
  refund_status: alwaysNull,
  customer: alwaysNull,
  invoice: alwaysNull,
  subscription: alwaysNull,
})
