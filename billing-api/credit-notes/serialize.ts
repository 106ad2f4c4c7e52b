import { iso, pick, serializeBase } from '../db/common.js'
import { toMoneyString } from '../pricing/index.js'
import type { CreditNoteLineItem } from './credit-note.entity.js'
import type { CreditNoteView } from './reads.js'

export function serializeCreditNoteLine(l: CreditNoteLineItem) {
  return {
    ...serializeBase(l),
    ...pick(l, ['credit_note_id', 'invoice_line_item_id', 'display_name', 'currency']),
    amount: toMoneyString(l.amount, l.currency),
  }
}

/** Relations Flexprice's SDK names (customer, invoice, subscription) are not expanded: null. */
export function serializeCreditNote({ note, lines }: CreditNoteView) {
  return {
    ...serializeBase(note),
    ...pick(note, ['invoice_id', 'customer_id', 'subscription_id', 'credit_note_number', 'credit_note_status', 'credit_note_type', 'reason', 'memo', 'currency', 'idempotency_key']),
    total_amount: toMoneyString(note.total_amount, note.currency),
    finalized_at: iso(note.finalized_at),
    voided_at: iso(note.voided_at),
    line_items: lines.map(serializeCreditNoteLine),
    refund_status: null, customer: null, invoice: null, subscription: null,
  }
}
