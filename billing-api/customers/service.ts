// Customer use cases: create (with its customer.created event), get, update, delete, search.
// Every use case answers with the customer and its provider integrations.
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { Metadata } from '../db/common.js'
import { publishSystemEvent } from '../events/index.js'
import { findPage, type SearchInput } from '../http/metadata-filter.js'
import { CustomerIntegrationSchema, type CustomerIntegration } from './customer-integration.entity.js'
import { CustomerSchema, type Customer } from './customer.entity.js'
import { serializeCustomer } from './serialize.js'
import { findInScope, retireRecord, publishedBy } from '../db/scoped-records.js'

const OPTIONAL_FIELDS = [
  'name', 'email', 'address_line1', 'address_line2', 'address_city', 'address_state', 'address_postal_code', 'address_country',
] as const

export type CustomerInput = { external_id: string; metadata?: Metadata } & { [K in (typeof OPTIONAL_FIELDS)[number]]?: string }
export type CustomerUpdate = Partial<CustomerInput>

export interface CustomerSearch extends SearchInput {
  external_id?: string
  email?: string
}

export interface CustomerView {
  customer: Customer
  integrations: CustomerIntegration[]
}

export async function createCustomer(em: EntityManager, scope: Scope, userId: string, input: CustomerInput): Promise<CustomerView> {
  return em.transactional(async (tx) => {
    await assertExternalIdFree(tx, scope, input.external_id)
    const customer = tx.create(CustomerSchema, {
      ...Object.fromEntries(OPTIONAL_FIELDS.map((f) => [f, input[f] ?? null])),
      id: newId('cust'),
      ...scope,
      external_id: input.external_id,
      ...publishedBy(userId, input.metadata),
    })
    await tx.flush()
    // Same transaction as the customer: the event exists if and only if the customer does.
    publishSystemEvent(tx, scope, { event_name: 'customer.created', entity_type: 'customer', entity_id: customer.id, payload: serializeCustomer(customer) })
    return { customer, integrations: [] }
  })
}

export async function getCustomer(em: EntityManager, scope: Scope, id: string): Promise<CustomerView> {
  const [view] = await withIntegrations(em, scope, [await findCustomer(em, scope, id)])
  return view
}

export async function updateCustomer(em: EntityManager, scope: Scope, userId: string, id: string, patch: CustomerUpdate): Promise<CustomerView> {
  return em.transactional(async (tx) => {
    const customer = await findCustomer(tx, scope, id)
    if (patch.external_id !== undefined && patch.external_id !== customer.external_id) await assertExternalIdFree(tx, scope, patch.external_id)
    Object.assign(customer, patch, { updated_by: userId })
    await tx.flush()
    const [view] = await withIntegrations(tx, scope, [customer])
    return view
  })
}

/** Soft delete; the partial unique index then lets a new customer take the external_id. */
export async function deleteCustomer(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  const customer = await findCustomer(em, scope, id)
  await retireRecord(em, customer, 'deleted', userId)
}

export async function searchCustomers(em: EntityManager, scope: Scope, search: CustomerSearch): Promise<{ items: CustomerView[]; total: number }> {
  const where: FilterQuery<Customer> = { ...scope, status: search.status ?? 'published' }
  if (search.external_id !== undefined) where.external_id = search.external_id
  if (search.email !== undefined) where.email = search.email
  const { items, total } = await findPage(em, CustomerSchema, where, search.filters?.metadata, search, { created_at: 'asc', id: 'asc' })
  return { items: await withIntegrations(em, scope, items), total }
}

/** The id of the live (not deleted) customer with this external_id. */
export async function customerIdByExternalId(em: EntityManager, scope: Scope, externalId: string): Promise<string> {
  const customer = await em.findOne(CustomerSchema, { ...scope, external_id: externalId, status: { $ne: 'deleted' } })
  if (!customer) throw new NotFoundError('customer with external_id', externalId)
  return customer.id
}

async function findCustomer(em: EntityManager, scope: Scope, id: string): Promise<Customer> {
  return findInScope(em, CustomerSchema, scope, id, 'customer')
}

async function assertExternalIdFree(em: EntityManager, scope: Scope, externalId: string): Promise<void> {
  if (externalId.trim() === '') throw new ValidationError('external_id must not be blank', 'external_id')
  // The partial unique index settles concurrent requests; this check names the clash.
  const clash = await em.findOne(CustomerSchema, { ...scope, external_id: externalId, status: { $ne: 'deleted' } })
  if (clash) throw new AlreadyExistsError(`a customer with external_id ${externalId} already exists`)
}

async function withIntegrations(em: EntityManager, scope: Scope, customers: Customer[]): Promise<CustomerView[]> {
  if (customers.length === 0) return []
  const integrations = await em.find(
    CustomerIntegrationSchema,
    { ...scope, entity_id: { $in: customers.map((c) => c.id) }, status: 'published' },
    { orderBy: { created_at: 'asc', id: 'asc' } },
  )
  return customers.map((customer) => ({ customer, integrations: integrations.filter((i) => i.entity_id === customer.id) }))
}
