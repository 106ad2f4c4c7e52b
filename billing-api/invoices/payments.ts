// Recording a payment against a FINALIZED invoice. The invoice row is locked first, so
// payments on one invoice apply one after another; a request repeating an earlier
// idempotency_key of the same invoice is refused with 409 already_exists before anything is
// applied (and the unique index invoice_payments_idempotency backs that check).
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, InvalidOperationError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import { D, currencyPrecision, toMoneyString } from '../pricing/index.js'
import type { Invoice } from './invoice.entity.js'
import { lockInvoice, type ChangeOptions } from './lifecycle.js'
import { applyPayment, canTransition, creditedAmount } from './payment-status.js'
import { InvoicePaymentSchema, type InvoicePayment } from './payment.entity.js'
import { invoiceEventPayload } from './serialize.js'
import { onInvoicePaid } from '../wallets/index.js'
export interface PaymentInput extends ChangeOptions {
  /** decimal string > 0, at most the currency's decimals */
  amount: string
  paid_at?: string
  reference?: string
  idempotency_key?: string
  metadata?: Record<string, string>
}

export async function recordPayment(
  ctx: BillingContext, em: EntityManager, scope: Scope, invoiceId: string, input: PaymentInput, userId: string | null = null,
): Promise<{ payment: InvoicePayment; invoice: Invoice }> {
  const amount = D(input.amount)
  if (!amount.isPositive() || amount.isZero()) throw new ValidationError('amount must be greater than 0', 'amount')
  return em.transactional(async (tx) => {
    const invoice = await lockInvoice(tx, scope, invoiceId, input)
    if (invoice.invoice_status !== 'FINALIZED') {
      throw new InvalidOperationError(`invoice ${invoiceId} is ${invoice.invoice_status}; payments are recorded on FINALIZED invoices only`)
    }
    if (amount.decimalPlaces() > currencyPrecision(invoice.currency)) {
      throw new ValidationError(`amount has more decimals than ${invoice.currency} allows (${currencyPrecision(invoice.currency)})`, 'amount')
    }
    if (input.idempotency_key !== undefined) {
      const earlier = await tx.findOne(InvoicePaymentSchema, { ...scope, invoice_id: invoiceId, idempotency_key: input.idempotency_key })
      if (earlier) throw new AlreadyExistsError(`payment with idempotency_key ${input.idempotency_key} was already recorded as ${earlier.id}`)
    }
    // Payments settle amount_due: what is left after prepaid credits (finalize-amounts.ts), less
    // what refunds credited while it was still owed (payments/refund-math.ts).
    const credited = creditedAmount(invoice).toFixed()
    const outcome = applyPayment({ total: invoice.amount_due, amount_paid: invoice.amount_paid, currency: invoice.currency, credited }, input.amount)
    if (!canTransition(invoice.payment_status, outcome.payment_status)) {
      throw new InvalidOperationError(`invoice ${invoiceId} is ${invoice.payment_status}; a payment cannot make it ${outcome.payment_status}`)
    }
    const paidAt = input.paid_at ? new Date(input.paid_at) : ctx.clock.now()
    const payment = tx.create(InvoicePaymentSchema, {
      id: newId('pay'), ...scope, invoice_id: invoiceId, amount: toMoneyString(input.amount, invoice.currency), currency: invoice.currency,
      reference: input.reference ?? null, idempotency_key: input.idempotency_key ?? null, paid_at: paidAt,
      status: 'published', metadata: input.metadata ?? {}, created_by: userId, updated_by: userId,
    })
    const from = invoice.payment_status
    invoice.amount_paid = outcome.amount_paid
    invoice.amount_remaining = outcome.amount_remaining
    invoice.overpaid_amount = outcome.overpaid_amount
    invoice.payment_status = outcome.payment_status
    if (outcome.fully_paid) invoice.paid_at ??= paidAt
    invoice.updated_by = userId
    // Published for every recorded payment: the amounts change even while the status stays PENDING.
    publishSystemEvent(tx, scope, {
      event_name: 'invoice.payment_status_updated', entity_type: 'invoice', entity_id: invoice.id,
      payload: { ...invoiceEventPayload(invoice), previous_payment_status: from, payment_id: payment.id, payment_amount: payment.amount },
    })
    await tx.flush()
    // A2 (wallet auto top-up): a paid WALLET_AUTO_TOPUP invoice credits its wallet and re-arms the alert.
    if (outcome.fully_paid) await onInvoicePaid(ctx, tx, invoice)
    return { payment, invoice }
  })
}
