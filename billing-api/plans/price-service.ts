// Price use cases for prices managed one by one: add to a plan, read, list, update, archive.
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
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
}

export async function createPrice(em: EntityManager, scope: Scope, userId: string, input: CreatePriceInput): Promise<Price> {
  return em.transactional(async (tx) => {
    await validatePriceInput(tx, scope, input, '')
    const sequence = await nextPriceSequence(tx, scope, input.entity_id)
    return buildPrice(tx, scope, userId, { type: 'PLAN', id: input.entity_id }, input, sequence)
  })
}

export async function getPrice(em: EntityManager, scope: Scope, id: string): Promise<Price> {
  return findInScope(em, PriceSchema, scope, id, 'price')
}

export async function listPrices(em: EntityManager, scope: Scope, filter: PriceFilter): Promise<{ items: Price[]; total: number }> {
  const where: FilterQuery<Price> = { ...scope, status: filter.status ?? 'published' }
  if (filter.entity_type !== undefined) where.entity_type = filter.entity_type
  if (filter.entity_id !== undefined) where.entity_id = filter.entity_id
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
async function nextPriceSequence(em: EntityManager, scope: Scope, planId: string): Promise<number> {
  const rows = await em.execute<{ max_price_sequence: number }[]>(
    `UPDATE plans SET max_price_sequence = max_price_sequence + 1, updated_at = now()
      WHERE id = ? AND tenant_id = ? AND environment_id = ? AND status = 'published'
      RETURNING max_price_sequence`,
    [planId, scope.tenant_id, scope.environment_id],
  )
  if (rows.length === 0) throw new ValidationError(`entity_id: no published plan ${planId}`, 'entity_id')
  return rows[0].max_price_sequence
}
