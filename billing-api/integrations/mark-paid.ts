// "The provider says this invoice is paid" (inbound invoice.paid, or a pull that finds it
// paid): records one payment of the invoice's amount_remaining through invoices/payments.ts.
// The payment's idempotency key is `<provider>:<provider invoice id>:paid`, so however many
// times the provider repeats itself, the invoice is paid once.
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, InvalidOperationError, NotFoundError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { InvoiceSchema } from '../invoices/invoice.entity.js'
import { recordPayment } from '../invoices/index.js'
import { D } from '../pricing/index.js'

const SETTLED = new Set(['SUCCEEDED', 'OVERPAID', 'REFUNDED', 'PARTIALLY_REFUNDED'])

/** true when this call recorded the payment; false when the invoice was already paid. */
export async function markInvoicePaid(
  ctx: BillingContext, em: EntityManager, scope: Scope, invoiceId: string, provider: string, providerInvoiceId: string,
): Promise<boolean> {
  const invoice = await em.findOne(InvoiceSchema, { id: invoiceId, ...scope, status: { $ne: 'deleted' } }, { refresh: true })
  if (!invoice) throw new NotFoundError('invoice', invoiceId)
  if (SETTLED.has(invoice.payment_status)) return false
  if (invoice.invoice_status !== 'FINALIZED') {
    throw new InvalidOperationError(`invoice ${invoiceId} is ${invoice.invoice_status}; ${provider} reported it paid, which applies to FINALIZED invoices only`)
  }
  if (D(invoice.amount_remaining).isZero()) return false
  try {
    await recordPayment(ctx, em, scope, invoiceId, {
      amount: invoice.amount_remaining,
      reference: `${provider}:${providerInvoiceId}`,
      idempotency_key: `${provider}:${providerInvoiceId}:paid`,
      // a payment recorded in between makes this a version_conflict, and the caller retries
      version: invoice.version,
    }, `system:${provider}`)
  } catch (err) {
    if (err instanceof AlreadyExistsError) return false
    throw err
  }
  return true
}
