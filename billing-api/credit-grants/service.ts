// Credit grant definitions: create, read, list, rename, archive. The terms (credits, rates,
// period, expiry) are fixed once created, because applications may already rest on them: a
// change of terms is an archive and a new grant.
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { Metadata } from '../db/common.js'
import type { RecordStatus } from '../http/metadata-filter.js'
import type { Page } from '../http/schemas.js'
import { PlanSchema } from '../plans/plan.entity.js'
import { D } from '../pricing/index.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { CreditGrantSchema, type CreditGrant } from './credit-grant.entity.js'
import { findInScope, retireRecord, publishedBy } from '../db/scoped-records.js'
import { checkCadenceAndScope, type CadenceAndScope } from './cadence-scope.js'

export interface CreditGrantInput extends CadenceAndScope {
  name: string
  plan_id?: string
  subscription_id?: string
  credits: string
  conversion_rate?: string
  topup_conversion_rate?: string
  credit_grant_anchor?: string
  start_date?: string
  end_date?: string
  expiration_duration?: number
  expiration_duration_unit?: CreditGrant['expiration_duration_unit']
  period: CreditGrant['period']
  period_count?: number
  priority?: number
  metadata?: Metadata
}

export type CreditGrantUpdate = Partial<Pick<CreditGrantInput, 'name' | 'metadata'>>

export interface CreditGrantFilter {
  plan_id?: string
  subscription_id?: string
  status?: RecordStatus
}

export async function createCreditGrant(em: EntityManager, scope: Scope, userId: string, input: CreditGrantInput): Promise<CreditGrant> {
  checkTerms(input)
  await checkOwner(em, scope, input)
  const date = (v: string | undefined) => (v === undefined ? null : new Date(v))
  const grant = em.create(CreditGrantSchema, {
    id: newId('cgrant'),
    ...scope,
    name: input.name,
    plan_id: input.plan_id ?? null,
    subscription_id: input.subscription_id ?? null,
    credits: input.credits,
    conversion_rate: input.conversion_rate ?? null,
    topup_conversion_rate: input.topup_conversion_rate ?? null,
    credit_grant_anchor: date(input.credit_grant_anchor),
    start_date: date(input.start_date),
    end_date: date(input.end_date),
    expiration_duration: input.expiration_duration ?? null,
    expiration_duration_unit: input.expiration_duration_unit ?? null,
    period: input.period,
    period_count: input.period_count ?? 1,
    priority: input.priority ?? 0,
    ...publishedBy(userId, input.metadata),
  })
  await em.flush()
  return grant
}

export async function getCreditGrant(em: EntityManager, scope: Scope, id: string): Promise<CreditGrant> {
  return findInScope(em, CreditGrantSchema, scope, id, 'credit grant')
}

/** Every grant matching the filter (published by default), oldest first: what a plan read includes. */
export async function listCreditGrants(em: EntityManager, scope: Scope, filter: CreditGrantFilter): Promise<CreditGrant[]> {
  return em.find(CreditGrantSchema, whereOf(scope, filter), { orderBy: { created_at: 'asc', id: 'asc' } })
}

export async function pageCreditGrants(em: EntityManager, scope: Scope, filter: CreditGrantFilter & Page): Promise<{ items: CreditGrant[]; total: number }> {
  const [items, total] = await em.findAndCount(CreditGrantSchema, whereOf(scope, filter), {
    orderBy: { created_at: 'asc', id: 'asc' }, limit: filter.limit, offset: filter.offset,
  })
  return { items, total }
}

export async function updateCreditGrant(em: EntityManager, scope: Scope, userId: string, id: string, patch: CreditGrantUpdate): Promise<CreditGrant> {
  const grant = await getCreditGrant(em, scope, id)
  Object.assign(grant, patch, { updated_by: userId })
  await em.flush()
  return grant
}

export async function archiveCreditGrant(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  const grant = await getCreditGrant(em, scope, id)
  await retireRecord(em, grant, 'archived', userId)
}

function whereOf(scope: Scope, filter: CreditGrantFilter): FilterQuery<CreditGrant> {
  const where: FilterQuery<CreditGrant> = { ...scope, status: filter.status ?? 'published' }
  if (filter.plan_id !== undefined) where.plan_id = filter.plan_id
  if (filter.subscription_id !== undefined) where.subscription_id = filter.subscription_id
  return where
}

function checkTerms(input: CreditGrantInput): void {
  for (const field of ['credits', 'conversion_rate', 'topup_conversion_rate'] as const) {
    const value = input[field]
    if (value !== undefined && D(value).lte(0)) throw new ValidationError(`${field} must be greater than 0`, field)
  }
  if ((input.expiration_duration === undefined) !== (input.expiration_duration_unit === undefined)) {
    throw new ValidationError('expiration_duration and expiration_duration_unit go together', 'expiration_duration_unit')
  }
  if (input.period === 'ONETIME' && input.period_count !== undefined && input.period_count !== 1) {
    throw new ValidationError('period_count must be 1 for a ONETIME grant', 'period_count')
  }
  if (input.start_date && input.end_date && new Date(input.end_date) <= new Date(input.start_date)) {
    throw new ValidationError('end_date must be after start_date', 'end_date')
  }
  checkCadenceAndScope(input)
}

/** A grant belongs to exactly one plan or one subscription of the same environment. */
async function checkOwner(em: EntityManager, scope: Scope, input: CreditGrantInput): Promise<void> {
  if ((input.plan_id === undefined) === (input.subscription_id === undefined)) {
    throw new ValidationError('exactly one of plan_id and subscription_id is required', 'plan_id')
  }
  if (input.plan_id !== undefined && !(await em.findOne(PlanSchema, { id: input.plan_id, ...scope, status: 'published' }))) {
    throw new ValidationError(`plan_id: plan ${input.plan_id} not found`, 'plan_id')
  }
  if (input.subscription_id !== undefined && !(await em.findOne(SubscriptionSchema, { id: input.subscription_id, ...scope, status: { $ne: 'deleted' } }))) {
    throw new ValidationError(`subscription_id: subscription ${input.subscription_id} not found`, 'subscription_id')
  }
}
