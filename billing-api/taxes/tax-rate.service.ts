// Tax rate use cases: create, read, list, update, delete, and the check every attachment goes through.
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, InvalidOperationError, NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { Metadata } from '../db/common.js'
import type { Page } from '../http/schemas.js'
import { TaxAssociationSchema } from './tax-association.entity.js'
import { TaxRateSchema, type TaxRate } from './tax-rate.entity.js'
import { taxRateValue, type TaxRateValueInput } from './tax-rate-value.js'
import { findInScope, publishedBy } from '../db/scoped-records.js'

export interface CreateTaxRateInput extends TaxRateValueInput {
  name: string
  code: string
  description?: string
  metadata?: Metadata
}

export async function createTaxRate(em: EntityManager, scope: Scope, userId: string, input: CreateTaxRateInput): Promise<TaxRate> {
  const code = codeOf(input.code)
  const rate = em.create(TaxRateSchema, {
    id: newId('taxrate'),
    ...scope,
    name: input.name,
    code,
    description: input.description ?? null,
    ...taxRateValue(input),
    ...publishedBy(userId, input.metadata),
  })
  await flushUniqueCode(em, code)
  return rate
}

export async function getTaxRate(em: EntityManager, scope: Scope, id: string): Promise<TaxRate> {
  return findInScope(em, TaxRateSchema, scope, id, 'tax rate')
}

/**
 * The rate, if it may be attached to something now; validation_error otherwise. Inside a transaction
 * the rate is share-locked until commit, so it cannot be archived or deleted under the new attachment.
 */
export async function requirePublishedTaxRate(em: EntityManager, scope: Scope, id: string): Promise<TaxRate> {
  const lock = em.isInTransaction() ? { lockMode: LockMode.PESSIMISTIC_READ } : {}
  const rate = await em.findOne(TaxRateSchema, { id, ...scope, status: { $ne: 'deleted' } }, lock)
  if (!rate) throw new ValidationError(`tax_rate_id: tax rate ${id} not found`, 'tax_rate_id')
  if (rate.status !== 'published') {
    throw new ValidationError(`tax_rate_id: tax rate ${id} is ${rate.status}; only published tax rates can be attached`, 'tax_rate_id')
  }
  return rate
}

export interface TaxRateFilter extends Page {
  status: 'published' | 'archived'
  code?: string
}

export async function listTaxRates(em: EntityManager, scope: Scope, filter: TaxRateFilter): Promise<[TaxRate[], number]> {
  const where: Record<string, unknown> = { ...scope, status: filter.status }
  if (filter.code !== undefined) where.code = filter.code.trim()
  return em.findAndCount(TaxRateSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: filter.limit, offset: filter.offset })
}

/** What a rate charges never changes once it may have been applied: create a new rate instead. */
export interface UpdateTaxRateInput {
  name?: string
  code?: string
  description?: string | null
  status?: 'published' | 'archived'
  metadata?: Metadata
}

export async function updateTaxRate(em: EntityManager, scope: Scope, userId: string, id: string, input: UpdateTaxRateInput): Promise<TaxRate> {
  const rate = await getTaxRate(em, scope, id)
  if (input.code !== undefined) rate.code = codeOf(input.code)
  if (input.name !== undefined) rate.name = input.name
  if (input.description !== undefined) rate.description = input.description
  if (input.status !== undefined) rate.status = input.status
  if (input.metadata !== undefined) rate.metadata = input.metadata
  rate.updated_by = userId
  await flushUniqueCode(em, rate.code)
  return rate
}

/** Soft delete, which frees the code. Refused while associations use the rate: archive it instead. */
export async function deleteTaxRate(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    // The row lock waits for attachments in flight (they share-lock the rate) before counting.
    const rate = await tx.findOne(TaxRateSchema, { id, ...scope, status: { $ne: 'deleted' } }, { lockMode: LockMode.PESSIMISTIC_WRITE })
    if (!rate) throw new NotFoundError('tax rate', id)
    const attached = await tx.count(TaxAssociationSchema, { ...scope, tax_rate_id: id, status: { $ne: 'deleted' } })
    if (attached > 0) {
      throw new InvalidOperationError(`tax rate ${id} has ${attached} association(s); delete them first or archive the rate`)
    }
    rate.status = 'deleted'
    rate.updated_by = userId
  })
}

function codeOf(raw: string): string {
  const code = raw.trim()
  if (!code) throw new ValidationError('code must not be blank', 'code')
  return code
}

/** The partial unique index decides, so two concurrent requests cannot both take a code. */
async function flushUniqueCode(em: EntityManager, code: string): Promise<void> {
  try {
    await em.flush()
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) {
      throw new AlreadyExistsError(`a tax rate with code ${code} already exists in this environment`)
    }
    throw err
  }
}
