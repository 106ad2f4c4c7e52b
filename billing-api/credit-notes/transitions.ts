// Credit note states: DRAFT -> FINALIZED (finalize: the invoice is credited) and DRAFT -> VOIDED
// (void: a draft cancelled; it never changed the invoice). A FINALIZED note is final, as
// Flexprice's SDK documents ("only draft credit notes can be voided"). Each change locks the
// invoice row, then the note's, in that order everywhere, so it is checked against the
// invoice's amounts as they are.
import type { Decimal } from 'decimal.js'
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError } from '../../platform/errors.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import type { Invoice, PaymentStatus } from '../invoices/invoice.entity.js'
import { canTransition, creditedAmount, invoiceEventPayload, lockInvoice } from '../invoices/index.js'
import { D, toMoneyString } from '../pricing/index.js'
import { findCreditNote, withLines, type CreditNoteView } from './reads.js'
import { serializeCreditNote } from './serialize.js'

export async function finalizeCreditNote(ctx: BillingContext, em: EntityManager, scope: Scope, userId: string, id: string): Promise<CreditNoteView> {
  return em.transactional(async (tx) => {
    const { invoice, view } = await lockDraft(tx, scope, id, 'finalized')
    await applyCreditNote(ctx, tx, scope, invoice, view, userId)
    return view
  })
}

export async function voidCreditNote(ctx: BillingContext, em: EntityManager, scope: Scope, userId: string, id: string): Promise<CreditNoteView> {
  return em.transactional(async (tx) => {
    const { view } = await lockDraft(tx, scope, id, 'voided')
    view.note.credit_note_status = 'VOIDED'
    view.note.voided_at = ctx.clock.now()
    view.note.updated_by = userId
    await tx.flush()
    publishSystemEvent(tx, scope, { event_name: 'credit_note.voided', entity_type: 'credit_note', entity_id: id, payload: serializeCreditNote(view) })
    return view
  })
}

async function lockDraft(tx: EntityManager, scope: Scope, id: string, verb: string): Promise<{ invoice: Invoice; view: CreditNoteView }> {
  const { invoice_id } = await findCreditNote(tx, scope, id)
  const invoice = await lockInvoice(tx, scope, invoice_id)
  const note = await findCreditNote(tx, scope, id, true)
  if (note.credit_note_status !== 'DRAFT') throw new InvalidOperationError(`credit note ${id} is ${note.credit_note_status}; only a DRAFT credit note can be ${verb}`)
  return { invoice, view: await withLines(tx, scope, note) }
}

/**
 * Finalizes a DRAFT note whose invoice the caller's transaction has locked: adjustment_amount
 * += total, amount_due and amount_remaining -= total (to the currency's decimals). An invoice
 * the note settles (nothing left to pay) becomes SUCCEEDED, or PARTIALLY_REFUNDED when refunds
 * credited part of it before, as a payment that settles it would make it (payment-status.ts).
 */
export async function applyCreditNote(ctx: BillingContext, tx: EntityManager, scope: Scope, invoice: Invoice, view: CreditNoteView, userId: string): Promise<void> {
  const { note } = view
  if (invoice.invoice_status !== 'FINALIZED') throw new InvalidOperationError(`invoice ${invoice.id} is ${invoice.invoice_status}; credit notes credit FINALIZED invoices only`)
  const total = D(note.total_amount)
  if (total.gt(invoice.amount_remaining)) {
    throw new InvalidOperationError(`credit note ${note.id} credits ${note.total_amount} but invoice ${invoice.id} has ${invoice.amount_remaining} left to pay`)
  }
  const money = (v: Decimal) => toMoneyString(v, invoice.currency)
  const previous = invoice.payment_status
  const settled: PaymentStatus = creditedAmount(invoice).gt(0) ? 'PARTIALLY_REFUNDED' : 'SUCCEEDED'
  invoice.adjustment_amount = money(D(invoice.adjustment_amount).plus(total))
  invoice.amount_due = money(D(invoice.amount_due).minus(total))
  invoice.amount_remaining = money(D(invoice.amount_remaining).minus(total))
  invoice.updated_by = userId
  const now = ctx.clock.now()
  if (D(invoice.amount_remaining).isZero()) {
    if (!canTransition(previous, settled)) throw new InvalidOperationError(`invoice ${invoice.id} is ${previous}; settling it by a credit note cannot make it ${settled}`)
    invoice.payment_status = settled
    invoice.paid_at ??= now
  }
  note.credit_note_status = 'FINALIZED'
  note.finalized_at = now
  note.updated_by = userId
  await tx.flush()
  if (invoice.payment_status !== previous) {
    publishSystemEvent(tx, scope, {
      event_name: 'invoice.payment_status_updated', entity_type: 'invoice', entity_id: invoice.id,
      payload: { ...invoiceEventPayload(invoice), previous_payment_status: previous, credit_note_id: note.id },
    })
  }
  publishSystemEvent(tx, scope, { event_name: 'credit_note.finalized', entity_type: 'credit_note', entity_id: note.id, payload: serializeCreditNote(view) })
}
