// Stripe through its official SDK. Customers: customers.create / customers.update. Invoices:
// invoices.create (draft, charge_automatically, auto_advance off, no pending items), one
// invoice item per line item in minor units, an adjustment item when discounts, taxes or
// credits make the total differ from the sum of the lines, then invoices.finalizeInvoice, so
// Stripe's total equals ours. Every create carries an idempotency key derived from our ids,
// so a retried job never creates a second customer, invoice or line at Stripe.
// Webhooks: Stripe's own scheme (Stripe-Signature, verified by webhooks.constructEvent).
import Stripe from 'stripe'
import { D } from '../../pricing/index.js'
import { toMinorUnits } from '../minor-units.js'
import { WebhookSignatureError, type CustomerForSync, type IntegrationProvider, type InvoiceForSync } from '../provider.js'
import { stripeClient } from './client.js'

const SIGNATURE_TOLERANCE_SECONDS = 300

function address(c: CustomerForSync) {
  const a = c.address
  if (!a.line1 && !a.city && !a.country && !a.postal_code) return undefined
  return {
    line1: a.line1 ?? undefined, line2: a.line2 ?? undefined, city: a.city ?? undefined,
    state: a.state ?? undefined, postal_code: a.postal_code ?? undefined, country: a.country ?? undefined,
  }
}

/** The invoice as a finalized Stripe invoice: its lines, and an adjustment to our total. */
async function pushInvoice(stripe: Stripe, inv: InvoiceForSync, providerCustomerId: string): Promise<string> {
  const currency = inv.currency.toLowerCase()
  const key = `meterline-invoice-${inv.id}`
  const created = await stripe.invoices.create(
    {
      customer: providerCustomerId, currency, collection_method: 'charge_automatically', auto_advance: false,
      pending_invoice_items_behavior: 'exclude',
      description: inv.invoice_number ? `Invoice ${inv.invoice_number}` : undefined,
      metadata: { meterline_invoice_id: inv.id, invoice_number: inv.invoice_number ?? '' },
    },
    { idempotencyKey: key },
  )
  const invoiceId = created.id
  for (const line of inv.lines) {
    await stripe.invoiceItems.create(
      { customer: providerCustomerId, invoice: invoiceId, currency, amount: toMinorUnits(line.amount, inv.currency), description: line.description, metadata: { meterline_line_item_id: line.id } },
      { idempotencyKey: `${key}-line-${line.id}` },
    )
  }
  const linesTotal = inv.lines.reduce((sum, l) => sum.plus(l.amount), D(0))
  const adjustment = D(inv.total).minus(linesTotal)
  if (!adjustment.isZero()) {
    await stripe.invoiceItems.create(
      { customer: providerCustomerId, invoice: invoiceId, currency, amount: toMinorUnits(adjustment.toString(), inv.currency), description: 'Discounts, credits and taxes' },
      { idempotencyKey: `${key}-adjustment` },
    )
  }
  await stripe.invoices.finalizeInvoice(invoiceId, { auto_advance: false }, { idempotencyKey: `${key}-finalize` })
  return invoiceId
}

export function stripeProvider(apiBase: string): IntegrationProvider {
  return {
    type: 'stripe',

    async syncCustomer(conn, c, existingId) {
      const stripe = stripeClient(conn.credentials.api_key, apiBase)
      const params = {
        name: c.name ?? undefined, email: c.email ?? undefined, address: address(c),
        metadata: { meterline_customer_id: c.id, external_id: c.external_id },
      }
      if (existingId) {
        await stripe.customers.update(existingId, params)
        return existingId
      }
      const created = await stripe.customers.create(params, { idempotencyKey: `meterline-customer-${c.id}` })
      return created.id
    },

    async pushInvoice(conn, inv, providerCustomerId) {
      return pushInvoice(stripeClient(conn.credentials.api_key, apiBase), inv, providerCustomerId)
    },

    async pullInvoice(conn, providerInvoiceId) {
      const stripe = stripeClient(conn.credentials.api_key, apiBase)
      const inv = await stripe.invoices.retrieve(providerInvoiceId)
      return { provider_entity_id: inv.id, status: (inv.status ?? 'draft') }
    },

    // Dunning: invoices.pay charges the customer's default payment method. A card decline is
    // an answer (StripeCardError), anything else a failure the job retries.
    async collectInvoice(conn, providerInvoiceId, idempotencyKey) {
      const stripe = stripeClient(conn.credentials.api_key, apiBase)
      try {
        const inv = await stripe.invoices.pay(providerInvoiceId, {}, { idempotencyKey })
        return inv.status === 'paid' ? { paid: true } : { paid: false, failure_code: 'not_paid', reason: `Stripe invoice is ${inv.status}` }
      } catch (err) {
        if (err instanceof Stripe.errors.StripeCardError) {
          return { paid: false, failure_code: err.decline_code ?? err.code ?? 'card_declined', reason: err.message }
        }
        throw err
      }
    },

    // A Checkout Session: mode payment for an amount (the card is kept for later charges),
    // mode setup to capture a card when nothing is due yet (a trial-start invoice).
    async createCheckout(conn, input) {
      const stripe = stripeClient(conn.credentials.api_key, apiBase)
      const currency = input.currency.toLowerCase()
      const metadata = { meterline_invoice_id: input.invoiceId }
      const common = {
        customer: input.providerCustomerId, client_reference_id: input.invoiceId, metadata,
        success_url: input.successUrl, ...(input.cancelUrl ? { cancel_url: input.cancelUrl } : {}),
      }
      const session = D(input.amount).gt(0)
        ? await stripe.checkout.sessions.create({
          ...common, mode: 'payment',
          line_items: [{ quantity: 1, price_data: { currency, unit_amount: toMinorUnits(input.amount, input.currency), product_data: { name: `Invoice ${input.label}` } } }],
          payment_intent_data: { setup_future_usage: 'off_session', metadata },
        }, { idempotencyKey: input.idempotencyKey })
        : await stripe.checkout.sessions.create({ ...common, mode: 'setup', currency, setup_intent_data: { metadata } }, { idempotencyKey: input.idempotencyKey })
      if (!session.url) throw new Error(`Stripe checkout session ${session.id} has no url`)
      return { id: session.id, url: session.url }
    },

    parseWebhook(conn, rawBody, headers, now) {
      const signature = headers['stripe-signature']
      if (typeof signature !== 'string' || signature === '') throw new WebhookSignatureError('missing Stripe-Signature header')
      const stripe = stripeClient(conn.credentials.api_key, apiBase)
      let event
      try {
        event = stripe.webhooks.constructEvent(rawBody, signature, conn.credentials.webhook_secret, SIGNATURE_TOLERANCE_SECONDS, undefined, now.getTime())
      } catch (err) {
        throw new WebhookSignatureError(`Stripe-Signature does not verify: ${(err as Error).message}`)
      }
      // The raw event is re-read so both snake_case and camelCase payloads keep their keys.
      const raw = event as unknown as { id: string; type: string; data?: { object?: Record<string, unknown> } }
      return { id: raw.id, type: raw.type, object: raw.data?.object ?? {} }
    },
  }
}
