// Tax association use cases: attach a published tax rate to a customer, a subscription or the
// tenant, list, read and detach.
import { UniqueConstraintViolationException } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import type { Metadata } from '../db/common.js'
import type { Page } from '../http/schemas.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { TaxAssociationSchema, type TaxAssociation, type TaxEntityType } from './tax-association.entity.js'
import { requirePublishedTaxRate } from './tax-rate.service.js'
import { TaxRateSchema } from './tax-rate.entity.js'
import { findInScope, retireRecord, publishedBy } from '../db/scoped-records.js'

export interface CreateTaxAssociationInput {
  /** one of tax_rate_id and tax_rate_code (the form Flexprice's SDK sends) */
  tax_rate_id?: string
  tax_rate_code?: string
  entity_type: TaxEntityType
  entity_id: string
  priority?: number
  auto_apply?: boolean
  metadata?: Metadata
}

async function taxRateIdOf(em: EntityManager, scope: Scope, input: CreateTaxAssociationInput): Promise<string> {
  if ((input.tax_rate_id === undefined) === (input.tax_rate_code === undefined)) {
    throw new ValidationError('tax_rate_id: give exactly one of tax_rate_id and tax_rate_code', 'tax_rate_id')
  }
  if (input.tax_rate_id !== undefined) return input.tax_rate_id
  const rate = await em.findOne(TaxRateSchema, { ...scope, code: input.tax_rate_code, status: 'published' })
  if (!rate) throw new ValidationError(`tax_rate_code: no published tax rate with code ${input.tax_rate_code}`, 'tax_rate_code')
  return rate.id
}

export async function createTaxAssociation(em: EntityManager, scope: Scope, userId: string, input: CreateTaxAssociationInput): Promise<TaxAssociation> {
  try {
    return await em.transactional(async (tx) => {
      const rate = await requirePublishedTaxRate(tx, scope, await taxRateIdOf(tx, scope, input))
      await requireEntity(tx, scope, input.entity_type, input.entity_id)
      const association = tx.create(TaxAssociationSchema, {
        id: newId('taxassoc'),
        ...scope,
        tax_rate_id: rate.id,
        entity_type: input.entity_type,
        entity_id: input.entity_id,
        priority: input.priority ?? 0,
        auto_apply: input.auto_apply ?? true,
        ...publishedBy(userId, input.metadata),
      })
      await tx.flush()
      return association
    })
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      throw new AlreadyExistsError(`tax rate ${input.tax_rate_id ?? input.tax_rate_code} is already associated with ${input.entity_type} ${input.entity_id}`)
    }
    throw err
  }
}

/** The entity must exist in the caller's scope: a tenant's taxes never attach to another's records. */
async function requireEntity(em: EntityManager, scope: Scope, type: TaxEntityType, id: string): Promise<void> {
  const where = { id, ...scope, status: 'published' }
  const found =
    type === 'tenant' ? id === scope.tenant_id
    : type === 'customer' ? (await em.count(CustomerSchema, where)) === 1
    : (await em.count(SubscriptionSchema, where)) === 1
  if (!found) throw new ValidationError(`entity_id: ${type} ${id} not found`, 'entity_id')
}

export async function getTaxAssociation(em: EntityManager, scope: Scope, id: string): Promise<TaxAssociation> {
  return findInScope(em, TaxAssociationSchema, scope, id, 'tax association')
}

export interface UpdateTaxAssociationInput {
  priority?: number
  auto_apply?: boolean
  metadata?: Record<string, string>
}

/** Changes how an association applies (priority, auto_apply) and its metadata; the rate and the entity are fixed. */
export async function updateTaxAssociation(em: EntityManager, scope: Scope, userId: string, id: string, input: UpdateTaxAssociationInput): Promise<TaxAssociation> {
  const association = await getTaxAssociation(em, scope, id)
  if (input.priority !== undefined) association.priority = input.priority
  if (input.auto_apply !== undefined) association.auto_apply = input.auto_apply
  if (input.metadata !== undefined) association.metadata = input.metadata
  association.updated_by = userId
  await em.flush()
  return association
}

export interface TaxAssociationFilter extends Page {
  entity_type?: TaxEntityType
  entity_id?: string
  tax_rate_id?: string
}

export async function listTaxAssociations(em: EntityManager, scope: Scope, filter: TaxAssociationFilter): Promise<[TaxAssociation[], number]> {
  const where: Record<string, unknown> = { ...scope, status: 'published' }
  if (filter.entity_type !== undefined) where.entity_type = filter.entity_type
  if (filter.entity_id !== undefined) where.entity_id = filter.entity_id
  if (filter.tax_rate_id !== undefined) where.tax_rate_id = filter.tax_rate_id
  return em.findAndCount(TaxAssociationSchema, where, {
    orderBy: { priority: 'asc', created_at: 'asc', id: 'asc' },
    limit: filter.limit,
    offset: filter.offset,
  })
}

export async function deleteTaxAssociation(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  const association = await getTaxAssociation(em, scope, id)
  await retireRecord(em, association, 'deleted', userId)
}
