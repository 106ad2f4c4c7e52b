// A real payment link through the Stripe integration: a Checkout Session for what is left to
// pay on a FINALIZED invoice (mode payment), or, for a zero-amount DRAFT awaiting card capture
// (a trial-start invoice with automatic collection), a session that saves a card (mode setup).
// The customer is pushed to Stripe first when it is not linked yet. The session's URL replaces
// the placeholder in the invoice's metadata.checkout_url (billing/trial-invoice.ts).
// The Stripe idempotency key is the invoice and the amount, so a repeated request for the same
// amount gets the same session back from Stripe.
import { DomainError, InvalidOperationError, ServiceUnavailableError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { findInScope } from '../db/scoped-records.js'
import { findMapping, findOpenConnection, providerFor, syncEntity } from '../integrations/index.js'
import { InvoiceSchema, type PaymentStatus } from '../invoices/invoice.entity.js'
import { lockInvoice } from '../invoices/index.js'
import { D } from '../pricing/index.js'

export interface PaymentLinkInput {
  success_url: string
  cancel_url?: string
}

export interface PaymentLink {
  invoice_id: string
  provider: string
  provider_session_id: string
  mode: 'payment' | 'setup'
  amount: string
  currency: string
  url: string
}

const COLLECTIBLE: readonly PaymentStatus[] = ['INITIATED', 'PENDING', 'PROCESSING', 'FAILED']

export async function createPaymentLink(ctx: BillingContext, scope: Scope, invoiceId: string, input: PaymentLinkInput, userId: string | null): Promise<PaymentLink> {
  const em = ctx.orm.em.fork()
  const invoice = await findInScope(em, InvoiceSchema, scope, invoiceId, 'invoice')
  const capture = invoice.invoice_status === 'DRAFT' && D(invoice.total).isZero() && invoice.payment_status === 'PENDING'
  const payable = invoice.invoice_status === 'FINALIZED' && D(invoice.amount_remaining).gt(0) && COLLECTIBLE.includes(invoice.payment_status)
  if (!capture && !payable) {
    throw new InvalidOperationError(
      `invoice ${invoiceId} is ${invoice.invoice_status} and ${invoice.payment_status} with ${invoice.amount_remaining} remaining; ` +
      'a payment link is for a FINALIZED invoice with something left to pay, or a zero-amount DRAFT awaiting card capture',
    )
  }
  const provider = providerFor(ctx.config, 'stripe')
  const conn = await findOpenConnection(ctx.config, em, scope, provider.type)
  if (!conn || !provider.createCheckout) throw new InvalidOperationError('this environment has no active stripe connection; create one with POST /v1/integrations/connections')
  const customerLink = await findMapping(em, scope, 'customer', invoice.customer_id, provider.type)
  const providerCustomerId = customerLink?.provider_entity_id
    ?? (await syncEntity(ctx, scope, { entity_type: 'customer', entity_id: invoice.customer_id, provider: provider.type, method: 'push' }, userId)).provider_entity_id
  const amount = capture ? '0' : invoice.amount_remaining
  let session
  try {
    session = await provider.createCheckout(conn, {
      providerCustomerId, invoiceId, label: invoice.invoice_number ?? invoice.id, currency: invoice.currency, amount,
      successUrl: input.success_url, cancelUrl: input.cancel_url, idempotencyKey: `meterline-checkout-${invoice.id}-${amount}`,
    })
  } catch (err) {
    if (err instanceof DomainError) throw err
    throw new ServiceUnavailableError(`${provider.type} request failed: ${(err as Error).message}`)
  }
  await em.transactional(async (tx) => {
    const locked = await lockInvoice(tx, scope, invoiceId)
    locked.metadata = { ...locked.metadata, checkout_url: session.url, checkout_session_id: session.id }
    locked.updated_by = userId
  })
  return {
    invoice_id: invoiceId, provider: provider.type, provider_session_id: session.id, mode: capture ? 'setup' : 'payment',
    amount, currency: invoice.currency, url: session.url,
  }
}
