// Inbound provider events about payments of our invoices (inbound-events.ts dispatches them):
//   checkout.session.completed (a payment link, payments/payment-link.ts): a paid session in
//     mode payment records a payment of its amount_total on the invoice in its metadata, key
//     `<provider>:<session id>:paid` (a redelivery records nothing). Sessions that saved a card
//     only (mode setup) change nothing here.
//   invoice.payment_failed: the linked invoice's failed attempt is recorded
//     (payments/payment-failures.ts, through the context's paymentFailures port), which starts the dunning schedule. While the invoice is
//     FAILED already, the schedule owns the attempts (its retries record their own failures), so
//     the provider's report of the same attempt is not counted twice.
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, InvalidOperationError } from '../../platform/errors.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { InvoiceSchema } from '../invoices/invoice.entity.js'
import { recordPayment } from '../invoices/index.js'
import { field, idField, metadataId, type Payload } from './inbound-fields.js'
import { findByProviderId } from './mappings.js'
import { fromMinorUnits } from './minor-units.js'
import type { InboundEvent } from './provider.js'

/** What these handlers use of inbound-events.ts's InboundContext. */
interface InboundContext {
  ctx: BillingContext
  tx: EntityManager
  scope: Scope
  provider: string
  event: InboundEvent
}

export async function checkoutCompleted(ic: InboundContext): Promise<string> {
  const o = ic.event.object
  if (field(o, 'mode') !== 'payment') return 'ignored: not a payment session'
  if (field(o, 'payment_status') !== 'paid') return 'ignored: session not paid'
  const invoiceId = metadataId(o, 'meterline_invoice_id')
  const sessionId = idField(o, 'id') ?? ic.event.id
  if (!invoiceId) return 'ignored: no invoice in the session metadata'
  const invoice = await ic.tx.findOne(InvoiceSchema, { id: invoiceId, ...ic.scope, status: { $ne: 'deleted' } })
  if (!invoice) return 'ignored: no such invoice'
  const total = field(o, 'amount_total')
  if (typeof total !== 'number') throw new Error(`checkout session ${sessionId} has no amount_total`)
  try {
    await recordPayment(ic.ctx, ic.tx, ic.scope, invoiceId, {
      amount: fromMinorUnits(total, invoice.currency), reference: `${ic.provider}:${sessionId}`, idempotency_key: `${ic.provider}:${sessionId}:paid`,
    }, `system:${ic.provider}`)
  } catch (err) {
    if (err instanceof AlreadyExistsError) return `invoice ${invoiceId}: session ${sessionId} already recorded`
    throw err
  }
  return `invoice ${invoiceId}: payment of session ${sessionId} recorded`
}

export async function invoicePaymentFailed(ic: InboundContext): Promise<string> {
  const providerInvoiceId = idField(ic.event.object, 'id')
  const mapping = providerInvoiceId ? await findByProviderId(ic.tx, ic.scope, 'invoice', ic.provider, providerInvoiceId) : null
  const invoiceId = mapping?.entity_id ?? metadataId(ic.event.object, 'meterline_invoice_id')
  if (!invoiceId) return 'ignored: no linked invoice'
  const invoice = await ic.tx.findOne(InvoiceSchema, { id: invoiceId, ...ic.scope, status: { $ne: 'deleted' } })
  if (!invoice) return 'ignored: no such invoice'
  if (invoice.payment_status === 'FAILED') return `invoice ${invoiceId} is FAILED already; its retry schedule owns the attempts`
  const reporting = ic.ctx.paymentFailures
  if (!reporting) throw new Error('payment failure reporting is not wired in this process')
  const error = field(ic.event.object, 'last_payment_error') as Payload | undefined
  try {
    const failure = await reporting.record(ic.ctx, ic.tx, ic.scope, invoiceId, {
      failure_code: (error && typeof field(error, 'code') === 'string' ? String(field(error, 'code')) : undefined) ?? 'payment_failed',
      reason: `${ic.provider} reported the payment failed`, idempotency_key: `${ic.provider}:${ic.event.id}`,
    }, `system:${ic.provider}`)
    return `invoice ${invoiceId}: failure ${failure.attempt} recorded`
  } catch (err) {
    if (err instanceof InvalidOperationError) return `ignored: ${err.message}`
    throw err
  }
}
