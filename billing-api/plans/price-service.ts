// Price use cases for prices managed one by one: add to a plan, read, list, update, archive.
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError, ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import type { RecordStatus } from '../http/metadata-filter.js'
import type { Page } from '../http/schemas.js'
import { PriceSchema, type Price } from './price.entity.js'
import { assertPriceLookupKeyFree, buildPrice, checkInvoiceCadence, validatePriceInput, type PriceInput } from './price-input.js'
import { findInScope, retireRecord } from '../db/scoped-records.js'

export interface CreatePriceInput extends PriceInput {
  entity_type: 'PLAN'
  entity_id: string
}

export type PriceUpdate = Partial<Pick<PriceInput, 'display_name' | 'description' | 'lookup_key' | 'invoice_cadence' | 'metadata'>>

export interface PriceFilter extends Page {
  entity_type?: Price['entity_type']
  entity_id?: string
  status?: RecordStatus
  /** POST /prices/search: any of these owners (plan_ids are PLAN owners), prices, meters */
  entity_ids?: string[]
  plan_ids?: string[]
  price_ids?: string[]
  meter_ids?: string[]
}

export async function createPrice(em: EntityManager, scope: Scope, userId: string, input: CreatePriceInput): Promise<Price> {
  return em.transactional((tx) => addPrice(tx, scope, userId, input, ''))
}

/** POST /prices/bulk: all of them or none; `items[i]` names the failing one. */
export async function createPrices(em: EntityManager, scope: Scope, userId: string, inputs: CreatePriceInput[]): Promise<Price[]> {
  return em.transactional(async (tx) => {
    const prices: Price[] = []
    for (const [i, input] of inputs.entries()) prices.push(await addPrice(tx, scope, userId, input, `items[${i}]`))
    return prices
  })
}

async function addPrice(tx: EntityManager, scope: Scope, userId: string, input: CreatePriceInput, field: string): Promise<Price> {
  await validatePriceInput(tx, scope, input, field)
  const sequence = await nextPriceSequence(tx, scope, input.entity_id, field)
  return buildPrice(tx, scope, userId, { type: 'PLAN', id: input.entity_id }, input, sequence)
}

/** A published price by its lookup key. */
export async function getPriceByLookupKey(em: EntityManager, scope: Scope, lookupKey: string): Promise<Price> {
  const price = await em.findOne(PriceSchema, { ...scope, lookup_key: lookupKey, status: 'published' })
  if (!price) throw new NotFoundError('price with lookup_key', lookupKey)
  return price
}

export async function getPrice(em: EntityManager, scope: Scope, id: string): Promise<Price> {
  return findInScope(em, PriceSchema, scope, id, 'price')
}

export async function listPrices(em: EntityManager, scope: Scope, filter: PriceFilter): Promise<{ items: Price[]; total: number }> {
  const where: FilterQuery<Price> = { ...scope, status: filter.status ?? 'published' }
  if (filter.entity_type !== undefined) where.entity_type = filter.entity_type
  if (filter.entity_id !== undefined) where.entity_id = filter.entity_id
  const owners: FilterQuery<Price>[] = []
  if (filter.plan_ids !== undefined) {
    if (filter.entity_type === 'ADDON') throw new ValidationError('plan_ids: plans own PLAN prices, not ADDON ones', 'plan_ids')
    where.entity_type = 'PLAN'
    owners.push({ entity_id: { $in: filter.plan_ids } })
  }
  if (filter.entity_ids !== undefined) owners.push({ entity_id: { $in: filter.entity_ids } })
  if (owners.length) where.$and = owners
  if (filter.price_ids !== undefined) where.id = { $in: filter.price_ids }
  if (filter.meter_ids !== undefined) where.meter_id = { $in: filter.meter_ids }
  const [items, total] = await em.findAndCount(PriceSchema, where, {
    orderBy: { entity_id: 'asc', sequence: 'asc', id: 'asc' }, limit: filter.limit, offset: filter.offset,
  })
  return { items, total }
}

/** Only descriptive fields and the invoice cadence change; amounts are fixed once subscriptions may bill them. */
export async function updatePrice(em: EntityManager, scope: Scope, userId: string, id: string, patch: PriceUpdate): Promise<Price> {
  return em.transactional(async (tx) => {
    const price = await getPrice(tx, scope, id)
    if (patch.invoice_cadence !== undefined) checkInvoiceCadence(price.type, patch.invoice_cadence, '')
    if (patch.lookup_key !== undefined && patch.lookup_key !== price.lookup_key) await assertPriceLookupKeyFree(tx, scope, patch.lookup_key, '')
    Object.assign(price, patch, { updated_by: userId })
    return price
  })
}

export async function archivePrice(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  const price = await getPrice(em, scope, id)
  await retireRecord(em, price, 'archived', userId)
}

/**
 * Takes the plan's next price sequence. The UPDATE locks the plan row until the caller's
 * transaction ends, so concurrent additions to one plan get distinct, increasing numbers.
 */
async function nextPriceSequence(em: EntityManager, scope: Scope, planId: string, field: string): Promise<number> {
  const rows = await em.execute<{ max_price_sequence: number }[]>(
    `UPDATE plans SET max_price_sequence = max_price_sequence + 1, updated_at = now()
      WHERE id = ? AND tenant_id = ? AND environment_id = ? AND status = 'published'
      RETURNING max_price_sequence`,
    [planId, scope.tenant_id, scope.environment_id],
  )
  const at = field ? `${field}.entity_id` : 'entity_id'
  if (rows.length === 0) throw new ValidationError(`${at}: no published plan ${planId}`, at)
  return rows[0].max_price_sequence
}
