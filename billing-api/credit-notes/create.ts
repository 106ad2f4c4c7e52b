// Creating a credit note on a FINALIZED invoice of the caller's environment. One transaction
// that row-locks the invoice first (as payments and refunds do), so notes, payments and refunds
// of one invoice are checked against each other's amounts; the note is a DRAFT unless
// process_credit_note asks to finalize it at once (Flexprice's SDK sends true by default).
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, InvalidOperationError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { BillingContext } from '../context.js'
import type { Metadata } from '../db/common.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { InvoiceLineItemSchema, InvoiceSchema, type Invoice } from '../invoices/invoice.entity.js'
import { lockInvoice } from '../invoices/index.js'
import { D, toMoneyString } from '../pricing/index.js'
import { creditNoteTotal } from './creditable.js'
import { CreditNoteLineItemSchema, CreditNoteSchema, type CreditNoteReason } from './credit-note.entity.js'
import { creditedOnInvoice, type CreditNoteView } from './reads.js'
import { serializeCreditNote } from './serialize.js'
import { applyCreditNote } from './transitions.js'

export interface CreditNoteInput {
  invoice_id: string
  reason: CreditNoteReason
  line_items: { invoice_line_item_id: string; amount: string; display_name?: string; metadata?: Metadata }[]
  memo?: string
  credit_note_number?: string
  idempotency_key?: string
  metadata?: Metadata
  process_credit_note?: boolean
}

export async function createCreditNote(ctx: BillingContext, em: EntityManager, scope: Scope, userId: string, input: CreditNoteInput): Promise<CreditNoteView> {
  return em.transactional(async (tx) => {
    // A body's reference to a record the caller cannot see is bad input, not a missing route target.
    const seen = await tx.findOne(InvoiceSchema, { id: input.invoice_id, ...scope, status: { $ne: 'deleted' } }, { fields: ['id'] })
    if (!seen) throw new ValidationError(`invoice_id: invoice ${input.invoice_id} not found`, 'invoice_id')
    const invoice = await lockInvoice(tx, scope, input.invoice_id)
    checkCreditable(invoice)
    if (input.idempotency_key !== undefined && await tx.findOne(CreditNoteSchema, { ...scope, idempotency_key: input.idempotency_key })) {
      throw new AlreadyExistsError(`a credit note with idempotency_key ${input.idempotency_key} already exists`)
    }
    const { perLine, reserved, count } = await creditedOnInvoice(tx, scope, invoice.id)
    const invoiceLines = await tx.find(InvoiceLineItemSchema, { ...scope, invoice_id: invoice.id })
    const lines = new Map(invoiceLines.map((l) => [l.id, {
      net: D(l.amount).minus(l.line_item_discount).minus(l.invoice_level_discount), credited: perLine.get(l.id) ?? D(0),
    }]))
    const total = creditNoteTotal({ currency: invoice.currency, amount_remaining: invoice.amount_remaining, reserved, lines }, input.line_items)
    const number = input.credit_note_number ?? `CN-${invoice.invoice_number}-${count + 1}`
    if (await tx.findOne(CreditNoteSchema, { ...scope, credit_note_number: number })) throw new AlreadyExistsError(`credit note number ${number} is taken`)
    const audit = { status: 'published', created_by: userId, updated_by: userId }
    const note = tx.create(CreditNoteSchema, {
      id: newId('cn'), ...scope, ...audit, metadata: input.metadata ?? {},
      invoice_id: invoice.id, customer_id: invoice.customer_id, subscription_id: invoice.subscription_id,
      credit_note_number: number, credit_note_status: 'DRAFT', credit_note_type: 'ADJUSTMENT', reason: input.reason,
      memo: input.memo ?? null, currency: invoice.currency, total_amount: toMoneyString(total, invoice.currency),
      idempotency_key: input.idempotency_key ?? null, finalized_at: null, voided_at: null,
    })
    const names = new Map(invoiceLines.map((l) => [l.id, l.display_name]))
    const noteLines = input.line_items.map((l) => tx.create(CreditNoteLineItemSchema, {
      id: newId('cnli'), ...scope, ...audit, metadata: l.metadata ?? {}, credit_note_id: note.id, invoice_line_item_id: l.invoice_line_item_id,
      display_name: l.display_name ?? names.get(l.invoice_line_item_id) ?? null, amount: toMoneyString(l.amount, invoice.currency), currency: invoice.currency,
    }))
    await tx.flush()
    const view = { note, lines: noteLines }
    publishSystemEvent(tx, scope, { event_name: 'credit_note.created', entity_type: 'credit_note', entity_id: note.id, payload: serializeCreditNote(view) })
    if (input.process_credit_note) await applyCreditNote(ctx, tx, scope, invoice, view, userId)
    return view
  })
}

function checkCreditable(invoice: Invoice): void {
  if (invoice.invoice_status !== 'FINALIZED') {
    throw new InvalidOperationError(`invoice ${invoice.id} is ${invoice.invoice_status}; credit notes are issued on FINALIZED invoices only`)
  }
  if (invoice.invoice_type === 'CREDIT') throw new InvalidOperationError(`invoice ${invoice.id} is a CREDIT invoice: there is nothing to credit on it`)
  if (!D(invoice.amount_remaining).gt(0)) {
    throw new InvalidOperationError(`invoice ${invoice.id} is settled (nothing left to pay): what was paid is refunded with POST /v1/invoices/${invoice.id}/refunds`)
  }
}
