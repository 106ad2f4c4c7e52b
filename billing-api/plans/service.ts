// Plan use cases. A plan is created together with its prices in one transaction.
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../auth/authenticate.js'
import { MeterSchema } from '../meters/meter.entity.js'
import { PlanSchema, type Plan } from './plan.entity.js'
import { PriceSchema, type Price, type PriceTier } from './price.entity.js'
import { toPriceDefinition, validatePriceDefinition } from './price-definition.js'

export interface PriceInput {
  type: Price['type']
  billing_model: Price['billing_model']
  tier_mode?: 'VOLUME' | 'SLAB'
  currency: string
  amount?: string
  meter_id?: string
  billing_period: Price['billing_period']
  billing_period_count?: number
  invoice_cadence: Price['invoice_cadence']
  trial_period_days?: number
  tiers?: PriceTier[]
  transform_quantity?: { divide_by: number; round?: 'up' | 'down' }
  min_quantity?: string
  lookup_key?: string
  description?: string
  display_name?: string
  metadata?: Record<string, string>
}

export interface PlanInput {
  name: string
  lookup_key?: string
  description?: string
  display_order?: number
  prices?: PriceInput[]
  metadata?: Record<string, string>
}

export async function validatePriceInput(em: EntityManager, scope: Scope, p: PriceInput, field: string): Promise<void> {
  if (p.type === 'USAGE') {
    if (!p.meter_id) throw new ValidationError(`${field}.meter_id is required for USAGE prices`, `${field}.meter_id`)
    // Spec, Errors 9: usage is only known at the end of a period.
    if (p.invoice_cadence !== 'ARREAR') {
      throw new ValidationError(`${field}.invoice_cadence: usage-based prices must be billed in ARREAR, not ADVANCE`, `${field}.invoice_cadence`)
    }
    const meter = await em.findOne(MeterSchema, { id: p.meter_id, ...scope, status: 'published' })
    if (!meter) throw new ValidationError(`${field}.meter_id: meter ${p.meter_id} not found`, `${field}.meter_id`)
  } else if (p.meter_id) {
    throw new ValidationError(`${field}.meter_id is only allowed on USAGE prices`, `${field}.meter_id`)
  }
  if (p.billing_model !== 'TIERED' && p.amount === undefined) throw new ValidationError(`${field}.amount is required`, `${field}.amount`)
  if (p.billing_model === 'TIERED' && (!p.tiers || !p.tier_mode)) {
    throw new ValidationError(`${field}: TIERED prices need tier_mode and tiers`, `${field}.tiers`)
  }
  validatePriceDefinition(toPriceDefinition(priceColumns(p)), field)
}

function priceColumns(p: PriceInput) {
  return {
    type: p.type,
    billing_model: p.billing_model,
    tier_mode: p.tier_mode ?? null,
    amount: p.amount ?? '0',
    currency: p.currency.toUpperCase(),
    tiers: p.tiers ?? null,
    transform_quantity: p.transform_quantity ? { divide_by: p.transform_quantity.divide_by, round: p.transform_quantity.round ?? 'up' } : null,
    min_quantity: p.min_quantity ?? null,
  }
}

export function buildPrice(em: EntityManager, scope: Scope, userId: string, entity: { type: 'PLAN' | 'ADDON'; id: string }, p: PriceInput, sequence: number): Price {
  return em.create(PriceSchema, {
    id: newId('price'),
    ...scope,
    entity_type: entity.type,
    entity_id: entity.id,
    ...priceColumns(p),
    meter_id: p.meter_id ?? null,
    billing_period: p.billing_period,
    billing_period_count: p.billing_period_count ?? 1,
    billing_cadence: 'RECURRING',
    invoice_cadence: p.invoice_cadence,
    trial_period_days: p.trial_period_days ?? 0,
    lookup_key: p.lookup_key ?? null,
    description: p.description ?? null,
    display_name: p.display_name ?? null,
    sequence,
    start_date: null,
    end_date: null,
    status: 'published',
    metadata: p.metadata ?? {},
    created_by: userId,
    updated_by: userId,
  } as any)
}

export async function createPlan(em: EntityManager, scope: Scope, userId: string, input: PlanInput): Promise<{ plan: Plan; prices: Price[] }> {
  return em.transactional(async (tx) => {
    const prices = input.prices ?? []
    for (const [i, p] of prices.entries()) await validatePriceInput(tx, scope, p, `prices[${i}]`)
    const plan = tx.create(PlanSchema, {
      id: newId('plan'), ...scope, name: input.name, lookup_key: input.lookup_key ?? null, description: input.description ?? null,
      display_order: input.display_order ?? 0, status: 'published', metadata: input.metadata ?? {}, created_by: userId, updated_by: userId,
    } as any)
    const created = prices.map((p, i) => buildPrice(tx, scope, userId, { type: 'PLAN', id: plan.id }, p, i + 1))
    return { plan, prices: created }
  })
}

export async function getPlan(em: EntityManager, scope: Scope, id: string): Promise<{ plan: Plan; prices: Price[] }> {
  const plan = await em.findOne(PlanSchema, { id, ...scope, status: { $ne: 'deleted' } })
  if (!plan) throw new NotFoundError('plan', id)
  const prices = await em.find(PriceSchema, { ...scope, entity_type: 'PLAN', entity_id: id, status: 'published' }, { orderBy: { sequence: 'asc' } })
  return { plan, prices }
}
