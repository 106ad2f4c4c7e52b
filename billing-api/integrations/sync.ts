// One sync of one entity with one provider (POST /v1/integrations/sync and the background
// jobs). push: customers are created or updated at the provider; FINALIZED invoices are
// created there once (with their customer first when it is not linked yet), later pushes of a
// linked invoice change nothing. pull: invoices only, providers with pullInvoice only; a
// provider invoice found paid marks ours paid (mark-paid.ts).
import type { EntityManager } from '@mikro-orm/postgresql'
import { DomainError, InvalidOperationError, ServiceUnavailableError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { CustomerSchema, type Customer } from '../customers/customer.entity.js'
import { InvoiceLineItemSchema, InvoiceSchema } from '../invoices/invoice.entity.js'
import { requireOpenConnection } from './connections.js'
import type { MappedEntityType } from '../queues.js'
import { markInvoicePaid } from './mark-paid.js'
import { findMapping, requireEntity, upsertMapping } from './mappings.js'
import type { CustomerForSync, IntegrationProvider, InvoiceForSync, OpenConnection } from './provider.js'
import { providerFor } from './providers.js'

export interface SyncInput {
  entity_type: MappedEntityType
  entity_id: string
  provider: string
  method: 'push' | 'pull'
}

export type SyncOutcome = 'created' | 'updated' | 'already_synced' | 'marked_paid' | 'no_change'

export interface SyncResult extends SyncInput {
  provider_entity_id: string
  outcome: SyncOutcome
  provider_status?: string
}

const SYSTEM_USER = 'system:integrations'

export async function syncEntity(ctx: BillingContext, scope: Scope, input: SyncInput, userId: string | null = SYSTEM_USER): Promise<SyncResult> {
  const provider = providerFor(ctx.config, input.provider)
  if (input.method === 'pull') {
    if (!provider.pullInvoice) throw new InvalidOperationError(`provider ${provider.type} does not support pull sync; only stripe does`)
    if (input.entity_type !== 'invoice') throw new InvalidOperationError('pull sync applies to invoices only')
  }
  if (input.entity_type === 'subscription') throw new InvalidOperationError('subscriptions are linked, not synced')
  const em = ctx.orm.em.fork()
  await requireEntity(em, scope, input.entity_type, input.entity_id)
  const conn = await requireOpenConnection(ctx.config, em, scope, provider.type)
  if (input.method === 'pull') return pullInvoice(ctx, em, scope, provider, conn, input)
  if (input.entity_type === 'customer') {
    const { providerId, outcome } = await pushCustomer(em, scope, provider, conn, input.entity_id, userId)
    return { ...input, provider_entity_id: providerId, outcome }
  }
  return pushInvoice(em, scope, provider, conn, input, userId)
}

/** A provider that fails or cannot be reached answers 503 service_unavailable (jobs retry). */
async function viaProvider<T>(provider: IntegrationProvider, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (err) {
    if (err instanceof DomainError) throw err
    throw new ServiceUnavailableError(`${provider.type} request failed: ${(err as Error).message}`)
  }
}

function customerForSync(c: Customer): CustomerForSync {
  return {
    id: c.id, external_id: c.external_id, name: c.name, email: c.email,
    address: { line1: c.address_line1, line2: c.address_line2, city: c.address_city, state: c.address_state, postal_code: c.address_postal_code, country: c.address_country },
  }
}

async function pushCustomer(em: EntityManager, scope: Scope, provider: IntegrationProvider, conn: OpenConnection, customerId: string, userId: string | null) {
  const customer = await em.findOneOrFail(CustomerSchema, { id: customerId, ...scope })
  const mapping = await findMapping(em, scope, 'customer', customerId, provider.type)
  const providerId = await viaProvider(provider, () => provider.syncCustomer(conn, customerForSync(customer), mapping?.provider_entity_id ?? null))
  await upsertMapping(em, scope, { entity_type: 'customer', entity_id: customerId, provider: provider.type, provider_entity_id: providerId }, userId)
  return { providerId, outcome: (mapping ? 'updated' : 'created') as SyncOutcome }
}

async function pushInvoice(em: EntityManager, scope: Scope, provider: IntegrationProvider, conn: OpenConnection, input: SyncInput, userId: string | null): Promise<SyncResult> {
  const invoice = await em.findOneOrFail(InvoiceSchema, { id: input.entity_id, ...scope })
  if (invoice.invoice_status !== 'FINALIZED') {
    throw new InvalidOperationError(`invoice ${invoice.id} is ${invoice.invoice_status}; only FINALIZED invoices are pushed to a provider`)
  }
  const existing = await findMapping(em, scope, 'invoice', invoice.id, provider.type)
  if (existing) return { ...input, provider_entity_id: existing.provider_entity_id, outcome: 'already_synced' }
  const customerMapping = await findMapping(em, scope, 'customer', invoice.customer_id, provider.type)
  const providerCustomerId = customerMapping?.provider_entity_id ?? (await pushCustomer(em, scope, provider, conn, invoice.customer_id, userId)).providerId
  const lines = await em.find(InvoiceLineItemSchema, { invoice_id: invoice.id, ...scope, status: { $ne: 'deleted' } }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const view: InvoiceForSync = {
    id: invoice.id, invoice_number: invoice.invoice_number, currency: invoice.currency, total: invoice.total, amount_remaining: invoice.amount_remaining,
    customer_id: invoice.customer_id, subscription_id: invoice.subscription_id, due_date: invoice.due_date, period_start: invoice.period_start, period_end: invoice.period_end,
    lines: lines.map((l) => ({ id: l.id, description: l.display_name ?? l.price_type ?? 'Charge', amount: l.amount })),
  }
  const providerId = await viaProvider(provider, () => provider.pushInvoice(conn, view, providerCustomerId))
  await upsertMapping(em, scope, { entity_type: 'invoice', entity_id: invoice.id, provider: provider.type, provider_entity_id: providerId }, userId)
  return { ...input, provider_entity_id: providerId, outcome: 'created' }
}

async function pullInvoice(ctx: BillingContext, em: EntityManager, scope: Scope, provider: IntegrationProvider, conn: OpenConnection, input: SyncInput): Promise<SyncResult> {
  const mapping = await findMapping(em, scope, 'invoice', input.entity_id, provider.type)
  if (!mapping) throw new InvalidOperationError(`invoice ${input.entity_id} is not linked to ${provider.type}; push or link it first`)
  const state = await viaProvider(provider, () => provider.pullInvoice!(conn, mapping.provider_entity_id))
  let outcome: SyncOutcome = 'no_change'
  if (state.status === 'paid' && (await markInvoicePaid(ctx, em, scope, input.entity_id, provider.type, mapping.provider_entity_id))) outcome = 'marked_paid'
  return { ...input, provider_entity_id: mapping.provider_entity_id, outcome, provider_status: state.status }
}
