// Stripe through its official SDK. Customers: customers.create / customers.update. Invoices:
// invoices.create (draft, charge_automatically, auto_advance off, no pending items), one
// invoice item per line item in minor units, an adjustment item when discounts, taxes or
// credits make the total differ from the sum of the lines, then invoices.finalizeInvoice, so
// Stripe's total equals ours. Every create carries an idempotency key derived from our ids,
// so a retried job never creates a second customer, invoice or line at Stripe.
// Webhooks: Stripe's own scheme (Stripe-Signature, verified by webhooks.constructEvent).
import { D } from '../../pricing/index.js'
import { toMinorUnits } from '../minor-units.js'
import { WebhookSignatureError, type CustomerForSync, type IntegrationProvider,} from '../provider.js'
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
      const stripe = stripeClient(conn.credentials.api_key, apiBase)
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
    },

    async pullInvoice(conn, providerInvoiceId) {
      const stripe = stripeClient(conn.credentials.api_key, apiBase)
      const inv = await stripe.invoices.retrieve(providerInvoiceId)
      return { provider_entity_id: inv.id, status: (inv.status ?? 'draft') }
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
