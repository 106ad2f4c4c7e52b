// Pricing unit use cases. A price copies its unit's code and conversion rate when it is
// created, so changing or archiving a unit never reprices existing prices.
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { Metadata } from '../db/common.js'
import type { RecordStatus } from '../http/metadata-filter.js'
import type { Page } from '../http/schemas.js'
import { D } from '../pricing/index.js'
import { PricingUnitSchema, type PricingUnit } from './pricing-unit.entity.js'
import { findInScope, retireRecord, publishedBy } from '../db/scoped-records.js'

export interface PricingUnitInput {
  name: string
  code: string
  symbol?: string
  base_currency: string
  conversion_rate: string
  metadata?: Metadata
}

/** code and base_currency identify what a unit is; they do not change. */
export type PricingUnitUpdate = Partial<Pick<PricingUnitInput, 'name' | 'symbol' | 'conversion_rate' | 'metadata'>>

export interface PricingUnitFilter extends Page {
  code?: string
  status?: RecordStatus
}

export async function createPricingUnit(em: EntityManager, scope: Scope, userId: string, input: PricingUnitInput): Promise<PricingUnit> {
  checkConversionRate(input.conversion_rate)
  // The partial unique index settles concurrent requests; this check names the clash.
  if (await em.findOne(PricingUnitSchema, { ...scope, code: input.code, status: { $ne: 'deleted' } })) {
    throw new AlreadyExistsError(`a pricing unit with code ${input.code} already exists`)
  }
  const unit = em.create(PricingUnitSchema, {
    id: newId('punit'),
    ...scope,
    name: input.name,
    code: input.code,
    symbol: input.symbol ?? null,
    base_currency: input.base_currency.toUpperCase(),
    conversion_rate: input.conversion_rate,
    ...publishedBy(userId, input.metadata),
  })
  await em.flush()
  return unit
}

export async function getPricingUnit(em: EntityManager, scope: Scope, id: string): Promise<PricingUnit> {
  return findInScope(em, PricingUnitSchema, scope, id, 'pricing unit')
}

/** The unit a new price may be written in: published and in scope, else null. */
export async function getPricingUnitByCode(em: EntityManager, scope: Scope, code: string): Promise<PricingUnit> {
  const unit = await em.findOne(PricingUnitSchema, { ...scope, code, status: 'published' })
  if (!unit) throw new NotFoundError('pricing unit with code', code)
  return unit
}

export async function findPublishedPricingUnit(em: EntityManager, scope: Scope, id: string): Promise<PricingUnit | null> {
  return em.findOne(PricingUnitSchema, { id, ...scope, status: 'published' })
}

export async function listPricingUnits(em: EntityManager, scope: Scope, filter: PricingUnitFilter): Promise<{ items: PricingUnit[]; total: number }> {
  const where: FilterQuery<PricingUnit> = { ...scope, status: filter.status ?? 'published' }
  if (filter.code !== undefined) where.code = filter.code
  const [items, total] = await em.findAndCount(PricingUnitSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: filter.limit, offset: filter.offset })
  return { items, total }
}

export async function updatePricingUnit(em: EntityManager, scope: Scope, userId: string, id: string, patch: PricingUnitUpdate): Promise<PricingUnit> {
  if (patch.conversion_rate !== undefined) checkConversionRate(patch.conversion_rate)
  const unit = await getPricingUnit(em, scope, id)
  Object.assign(unit, patch, { updated_by: userId })
  await em.flush()
  return unit
}

export async function archivePricingUnit(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  const unit = await getPricingUnit(em, scope, id)
  await retireRecord(em, unit, 'archived', userId)
}

function checkConversionRate(rate: string): void {
  if (D(rate).lte(0)) throw new ValidationError('conversion_rate must be greater than 0', 'conversion_rate')
}
