// Refunding (part of) what was paid on a FINALIZED invoice, in one transaction that row-locks
// the invoice:
// - the amounts change as refund-math.ts computes them (never more than amount_paid);
// - the credited part becomes a credit note: a CREDIT invoice (invoices/manual-invoices.ts, the
//   spec's invoice_type CREDIT) for the same customer, finalized at once, metadata
//   credited_invoice_id and refund_id. A refund that only returns an overpayment has none;
// - `invoice.refunded` and `invoice.payment_status_updated` are published (webhooks fan them out);
// - a repeated idempotency_key answers the refund it recorded first (200, replayed) when the
//   amount is the same, and 409 already_exists when it differs; nothing is applied twice.
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, InvalidOperationError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { InvoiceSchema, type Invoice } from '../invoices/invoice.entity.js'
import { canRefundTransition, createManualInvoice, finalizeLockedInvoice, invoiceEventPayload, lockInvoice, type ChangeOptions } from '../invoices/index.js'
import { InvoicePaymentSchema } from '../invoices/payment.entity.js'
import { D, toMoneyString } from '../pricing/index.js'
import { InvoiceRefundSchema, type InvoiceRefund } from './payments.entity.js'
import { applyRefund } from './refund-math.js'
import { serializeRefund } from './serialize.js'
import { assertVersion } from './version.js'

export interface RefundInput extends ChangeOptions {
  /** decimal string > 0, at most the currency's decimals */
  amount: string
  /** the payment refunded; when given, the refund is at most that payment less its earlier refunds */
  payment_id?: string
  reason?: string
  reference?: string
  idempotency_key?: string
}

export interface RefundResult {
  refund: InvoiceRefund
  invoice: Invoice
  credit_note: Invoice | null
  replayed: boolean
}

/** The idempotency key of a refund's credit note (stored as manual:<key>). */
export const creditNoteKey = (refundId: string): string => `credit_note:${refundId}`

export async function refundInvoice(
  ctx: BillingContext, em: EntityManager, scope: Scope, invoiceId: string, input: RefundInput, userId: string | null,
): Promise<RefundResult> {
  return em.transactional(async (tx) => {
    const invoice = await lockInvoice(tx, scope, invoiceId)
    if (input.idempotency_key !== undefined) {
      const earlier = await tx.findOne(InvoiceRefundSchema, { ...scope, invoice_id: invoiceId, idempotency_key: input.idempotency_key })
      if (earlier) {
        if (!D(earlier.amount).eq(D(input.amount))) {
          throw new AlreadyExistsError(`refund with idempotency_key ${input.idempotency_key} was already recorded as ${earlier.id} for ${earlier.amount}`)
        }
        const creditNote = earlier.credit_note_id ? await tx.findOne(InvoiceSchema, { id: earlier.credit_note_id, ...scope }) : null
        return { refund: earlier, invoice, credit_note: creditNote, replayed: true }
      }
    }
    assertVersion(invoice, input)
    if (invoice.invoice_status !== 'FINALIZED') {
      throw new InvalidOperationError(`invoice ${invoiceId} is ${invoice.invoice_status}; refunds apply to FINALIZED invoices only`)
    }
    if (invoice.invoice_type === 'CREDIT') throw new InvalidOperationError(`invoice ${invoiceId} is a CREDIT invoice; it collected nothing to refund`)
    if (input.payment_id !== undefined) await checkPaymentRefundable(tx, scope, invoice, input.payment_id, input.amount)
    const outcome = applyRefund(invoice, input.amount)
    if (!canRefundTransition(invoice.payment_status, outcome.payment_status)) {
      throw new InvalidOperationError(`invoice ${invoiceId} is ${invoice.payment_status}; a refund cannot make it ${outcome.payment_status}`)
    }
    const now = ctx.clock.now()
    const refundId = newId('refund')
    const creditNote = D(outcome.credited).gt(0) ? await issueCreditNote(ctx, tx, scope, invoice, refundId, outcome.credited, input.reason, userId) : null
    const refund = tx.create(InvoiceRefundSchema, {
      id: refundId, ...scope, invoice_id: invoiceId, payment_id: input.payment_id ?? null,
      amount: toMoneyString(input.amount, invoice.currency), excess_amount: outcome.excess, credited_amount: outcome.credited,
      currency: invoice.currency, reason: input.reason ?? null, reference: input.reference ?? null,
      idempotency_key: input.idempotency_key ?? null, credit_note_id: creditNote?.id ?? null, refunded_at: now,
      status: 'published', metadata: {}, created_by: userId, updated_by: userId,
    })
    const from = invoice.payment_status
    invoice.amount_paid = outcome.amount_paid
    invoice.overpaid_amount = outcome.overpaid_amount
    invoice.refunded_amount = outcome.refunded_amount
    invoice.amount_remaining = outcome.amount_remaining
    invoice.payment_status = outcome.payment_status
    invoice.updated_by = userId
    const payload = { ...invoiceEventPayload(invoice), previous_payment_status: from, refund: { ...serializeRefund({ ...refund, created_at: now, updated_at: now }) } }
    publishSystemEvent(tx, scope, { event_name: 'invoice.refunded', entity_type: 'invoice', entity_id: invoice.id, payload })
    publishSystemEvent(tx, scope, {
      event_name: 'invoice.payment_status_updated', entity_type: 'invoice', entity_id: invoice.id,
      payload: { ...invoiceEventPayload(invoice), previous_payment_status: from, refund_id: refund.id },
    })
    await tx.flush()
    return { refund, invoice, credit_note: creditNote, replayed: false }
  })
}

/** A refund naming a payment takes at most that payment less what was refunded of it before. */
async function checkPaymentRefundable(tx: EntityManager, scope: Scope, invoice: Invoice, paymentId: string, amount: string): Promise<void> {
  const payment = await tx.findOne(InvoicePaymentSchema, { id: paymentId, ...scope, invoice_id: invoice.id })
  if (!payment) throw new ValidationError(`payment_id: payment ${paymentId} of invoice ${invoice.id} not found`, 'payment_id')
  const earlier = await tx.find(InvoiceRefundSchema, { ...scope, invoice_id: invoice.id, payment_id: paymentId })
  const left = earlier.reduce((rest, r) => rest.minus(r.amount), D(payment.amount))
  if (D(amount).gt(left)) {
    throw new ValidationError(`amount is more than what is left to refund of payment ${paymentId} (${toMoneyString(left, invoice.currency)})`, 'amount')
  }
}

async function issueCreditNote(
  ctx: BillingContext, tx: EntityManager, scope: Scope, invoice: Invoice, refundId: string, credited: string, reason: string | undefined, userId: string | null,
): Promise<Invoice> {
  const label = invoice.invoice_number ?? invoice.id
  const { invoice: note } = await createManualInvoice(tx, ctx.clock, scope, userId, {
    customer_id: invoice.customer_id, invoice_type: 'CREDIT', currency: invoice.currency, idempotency_key: creditNoteKey(refundId),
    description: `Credit note for ${label}${reason ? `: ${reason}` : ''}`,
    metadata: { credited_invoice_id: invoice.id, refund_id: refundId },
    line_items: [{ display_name: `Refund of ${label}`, amount: credited }],
  })
  return finalizeLockedInvoice(ctx, tx, note)
}
