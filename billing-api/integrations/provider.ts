// What every payment/accounting provider adapter implements. Adapters are I/O only: they map
// our records to the provider's API and back; the use cases (sync.ts, inbound/) decide what to
// store. pullInvoice is optional: a provider without it answers pull syncs with the
// unsupported error (spec: Errors 11).
import type { Scope } from '../db/scope.js'
import type { ConnectionSettings } from './entities.js'

export interface ProviderCredentials {
  api_key: string
  webhook_secret: string
}

/** A connection with its credentials decrypted, for the duration of one call. */
export interface OpenConnection {
  id: string
  scope: Scope
  provider: string
  credentials: ProviderCredentials
  settings: ConnectionSettings
}

export interface CustomerForSync {
  id: string
  external_id: string
  name: string | null
  email: string | null
  address: { line1: string | null; line2: string | null; city: string | null; state: string | null; postal_code: string | null; country: string | null }
}

export interface InvoiceForSync {
  id: string
  invoice_number: string | null
  currency: string
  /** decimal strings */
  total: string
  amount_remaining: string
  customer_id: string
  subscription_id: string | null
  due_date: Date | null
  period_start: Date | null
  period_end: Date | null
  lines: { id: string; description: string; amount: string }[]
}

export type ProviderInvoiceStatus = 'draft' | 'open' | 'paid' | 'void' | 'uncollectible'

export interface ProviderInvoiceState {
  provider_entity_id: string
  status: ProviderInvoiceStatus
}

/** An inbound webhook event after signature verification, keys as sent (snake or camel case). */
export interface InboundEvent {
  id: string
  type: string
  object: Record<string, unknown>
}

/** The outcome of asking the provider to charge an invoice now (dunning, payments/retry-step.ts). */
export interface CollectionResult {
  paid: boolean
  /** when not paid: the provider's decline code and message */
  failure_code?: string
  reason?: string
}

export interface CheckoutInput {
  providerCustomerId: string
  invoiceId: string
  /** what the customer sees: the invoice number, else its id */
  label: string
  currency: string
  /** decimal string; 0 = capture a card for later charges (no payment now) */
  amount: string
  successUrl: string
  cancelUrl?: string
  idempotencyKey: string
}

export interface CheckoutSession {
  id: string
  url: string
}

export interface IntegrationProvider {
  readonly type: string
  /** creates the customer at the provider (existingId null) or updates it; returns the provider id */
  syncCustomer(conn: OpenConnection, customer: CustomerForSync, existingId: string | null): Promise<string>
  /** creates the invoice at the provider for the given provider customer; returns the provider id */
  pushInvoice(conn: OpenConnection, invoice: InvoiceForSync, providerCustomerId: string): Promise<string>
  pullInvoice?(conn: OpenConnection, providerInvoiceId: string): Promise<ProviderInvoiceState>
  /** charges the provider invoice now; a decline is a result, an unreachable provider throws */
  collectInvoice?(conn: OpenConnection, providerInvoiceId: string, idempotencyKey: string): Promise<CollectionResult>
  /** a hosted page where the customer pays the amount (or saves a card when it is 0) */
  createCheckout?(conn: OpenConnection, input: CheckoutInput): Promise<CheckoutSession>
  /** verifies the signature over the raw body and parses it; throws WebhookSignatureError */
  parseWebhook(conn: OpenConnection, rawBody: Buffer, headers: Record<string, string | string[] | undefined>, now: Date): InboundEvent
}

export class WebhookSignatureError extends Error {}
