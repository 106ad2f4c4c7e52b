// Plan use cases. A plan is created together with its prices in one transaction; archiving
// keeps it (and its prices) readable for the subscriptions that use it.
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { CreditGrant } from '../credit-grants/credit-grant.entity.js'
import { listCreditGrants } from '../credit-grants/index.js'
import { listEntitlements, type EntitlementResponse } from '../entitlements/index.js'
import { findPage, type SearchInput } from '../http/metadata-filter.js'
import { PlanSchema, type Plan } from './plan.entity.js'
import { PriceSchema, type Price } from './price.entity.js'
import { buildPrice, validatePriceInput, type PriceInput } from './price-input.js'
import { findInScope, retireRecord } from '../db/scoped-records.js'

export { buildPrice, validatePriceInput, type PriceInput } from './price-input.js'

export interface PlanInput {
  name: string
  lookup_key?: string
  description?: string
  display_order?: number
  prices?: PriceInput[]
  metadata?: Record<string, string>
}

export type PlanUpdate = Partial<Omit<PlanInput, 'prices'>>

export interface PlanSearch extends SearchInput {
  lookup_key?: string
}

export interface PlanWithPrices {
  plan: Plan
  prices: Price[]
}

export interface PlanDetail extends PlanWithPrices {
  creditGrants: CreditGrant[]
  entitlements: EntitlementResponse[]
}

export async function createPlan(em: EntityManager, scope: Scope, userId: string, input: PlanInput): Promise<PlanWithPrices> {
  return em.transactional(async (tx) => {
    if (input.lookup_key !== undefined) await assertLookupKeyFree(tx, scope, input.lookup_key)
    const prices = input.prices ?? []
    for (const [i, p] of prices.entries()) await validatePriceInput(tx, scope, p, `prices[${i}]`)
    const plan = tx.create(PlanSchema, {
      id: newId('plan'), ...scope, name: input.name, lookup_key: input.lookup_key ?? null, description: input.description ?? null,
      display_order: input.display_order ?? 0, max_price_sequence: prices.length, status: 'published', metadata: input.metadata ?? {},
      created_by: userId, updated_by: userId,
    })
    const created = prices.map((p, i) => buildPrice(tx, scope, userId, { type: 'PLAN', id: plan.id }, p, i + 1))
    return { plan, prices: created }
  })
}

export async function getPlan(em: EntityManager, scope: Scope, id: string): Promise<PlanWithPrices> {
  const plan = await findPlan(em, scope, id)
  return { plan, prices: await publishedPrices(em, scope, [id]) }
}

/** The plan as GET /plans/{id} shows it: with its prices, entitlements and published credit grants. */
export async function readPlan(em: EntityManager, scope: Scope, id: string): Promise<PlanDetail> {
  const { plan, prices } = await getPlan(em, scope, id)
  const [creditGrants, entitlements] = await Promise.all([listCreditGrants(em, scope, { plan_id: id }), listEntitlements(em, scope, 'PLAN', id)])
  return { plan, prices, creditGrants, entitlements }
}

export async function updatePlan(em: EntityManager, scope: Scope, userId: string, id: string, patch: PlanUpdate): Promise<PlanDetail> {
  await em.transactional(async (tx) => {
    const plan = await findPlan(tx, scope, id)
    if (patch.lookup_key !== undefined && patch.lookup_key !== plan.lookup_key) await assertLookupKeyFree(tx, scope, patch.lookup_key)
    Object.assign(plan, patch, { updated_by: userId })
  })
  return readPlan(em, scope, id)
}

export async function archivePlan(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  const plan = await findPlan(em, scope, id)
  await retireRecord(em, plan, 'archived', userId)
}

export async function searchPlans(em: EntityManager, scope: Scope, search: PlanSearch): Promise<{ items: PlanWithPrices[]; total: number }> {
  const where: FilterQuery<Plan> = { ...scope, status: search.status ?? 'published' }
  if (search.lookup_key !== undefined) where.lookup_key = search.lookup_key
  const { items, total } = await findPage(em, PlanSchema, where, search.filters?.metadata, search, { display_order: 'asc', created_at: 'asc', id: 'asc' })
  const prices = await publishedPrices(em, scope, items.map((p) => p.id))
  return { items: items.map((plan) => ({ plan, prices: prices.filter((p) => p.entity_id === plan.id) })), total }
}

async function findPlan(em: EntityManager, scope: Scope, id: string): Promise<Plan> {
  return findInScope(em, PlanSchema, scope, id, 'plan')
}

async function publishedPrices(em: EntityManager, scope: Scope, planIds: string[]): Promise<Price[]> {
  if (planIds.length === 0) return []
  return em.find(
    PriceSchema,
    { ...scope, entity_type: 'PLAN', entity_id: { $in: planIds }, status: 'published' },
    { orderBy: { entity_id: 'asc', sequence: 'asc' } },
  )
}

/** Names the clash; the partial unique index on plans settles concurrent requests. */
async function assertLookupKeyFree(em: EntityManager, scope: Scope, lookupKey: string): Promise<void> {
  if (await em.findOne(PlanSchema, { ...scope, lookup_key: lookupKey, status: { $ne: 'deleted' } })) {
    throw new AlreadyExistsError(`a plan with lookup_key ${lookupKey} already exists`)
  }
}
