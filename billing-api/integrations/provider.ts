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

export interface IntegrationProvider {
  readonly type: string
  /** creates the customer at the provider (existingId null) or updates it; returns the provider id */
  syncCustomer(conn: OpenConnection, customer: CustomerForSync, existingId: string | null): Promise<string>
  /** creates the invoice at the provider for the given provider customer; returns the provider id */
  pushInvoice(conn: OpenConnection, invoice: InvoiceForSync, providerCustomerId: string): Promise<string>
  pullInvoice?(conn: OpenConnection, providerInvoiceId: string): Promise<ProviderInvoiceState>
  /** verifies the signature over the raw body and parses it; throws WebhookSignatureError */
  parseWebhook(conn: OpenConnection, rawBody: Buffer, headers: Record<string, string | string[] | undefined>, now: Date): InboundEvent
}

export class WebhookSignatureError extends Error {}
