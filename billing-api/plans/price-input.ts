// A price as a client sends it: validation (rules of the catalog, then the pricing engine)
// and the Price row it becomes. Used for plan prices and by other price owners.
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { MeterSchema } from '../meters/meter.entity.js'
import { findPublishedPricingUnit } from '../pricing-units/index.js'
import type { PricingUnit } from '../pricing-units/pricing-unit.entity.js'
import { D } from '../pricing/index.js'
import { PriceSchema, type Price, type PriceTier } from './price.entity.js'
import { fieldPath, toPriceDefinition, validatePriceDefinition, type PriceColumns } from './price-definition.js'

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
  billing_cadence?: Price['billing_cadence']
  price_unit_type?: 'FIAT' | 'CUSTOM'
  trial_period_days?: number
  tiers?: PriceTier[]
  transform_quantity?: { divide_by: number; round?: 'up' | 'down' }
  min_quantity?: string
  /** a pricing unit of the environment; amounts then come from price_unit_amount / price_unit_tiers */
  price_unit_id?: string
  price_unit_amount?: string
  price_unit_tiers?: PriceTier[]
  lookup_key?: string
  description?: string
  display_name?: string
  metadata?: Record<string, string>
}

// validatePriceInput resolves an input's pricing unit once; buildPrice copies it onto the row.
const resolvedUnits = new WeakMap<PriceInput, PricingUnit>()

/** Spec, Errors 9: usage is only known at the end of a period, so it is never billed in advance. */
export function checkInvoiceCadence(type: Price['type'], cadence: Price['invoice_cadence'], field: string): void {
  if (type === 'USAGE' && cadence !== 'ARREAR') {
    const path = fieldPath(field, 'invoice_cadence')
    throw new ValidationError(`${path}: usage-based prices must be billed in ARREAR, not ${cadence}`, path)
  }
}

/** Names the clash; the partial unique index on prices settles concurrent requests. */
export async function assertPriceLookupKeyFree(em: EntityManager, scope: Scope, lookupKey: string, field: string): Promise<void> {
  if (await em.findOne(PriceSchema, { ...scope, lookup_key: lookupKey, status: { $ne: 'deleted' } })) {
    throw new AlreadyExistsError(`${fieldPath(field, 'lookup_key')}: a price with lookup_key ${lookupKey} already exists`)
  }
}

export async function validatePriceInput(em: EntityManager, scope: Scope, p: PriceInput, field: string): Promise<void> {
  const at = (name: string) => fieldPath(field, name)
  if (p.type === 'USAGE') {
    if (!p.meter_id) throw new ValidationError(`${at('meter_id')} is required for USAGE prices`, at('meter_id'))
    checkInvoiceCadence(p.type, p.invoice_cadence, field)
    const meter = await em.findOne(MeterSchema, { id: p.meter_id, ...scope, status: 'published' })
    if (!meter) throw new ValidationError(`${at('meter_id')}: meter ${p.meter_id} not found`, at('meter_id'))
  } else if (p.meter_id) {
    throw new ValidationError(`${at('meter_id')} is only allowed on USAGE prices`, at('meter_id'))
  }
  checkPriceUnitType(p, field)
  const unit = p.price_unit_id ? await resolveUnit(em, scope, p.price_unit_id, field) : null
  checkAmountFields(p, unit !== null, field)
  if (p.lookup_key !== undefined) await assertPriceLookupKeyFree(em, scope, p.lookup_key, field)
  const def = toPriceDefinition(priceColumns(p, unit))
  // The engine checks the unit's own base currency against the price currency.
  if (def.pricing_unit && unit) def.pricing_unit.base_currency = unit.base_currency
  validatePriceDefinition(def, field)
  if (unit) resolvedUnits.set(p, unit)
}

async function resolveUnit(em: EntityManager, scope: Scope, id: string, field: string): Promise<PricingUnit> {
  const unit = await findPublishedPricingUnit(em, scope, id)
  if (!unit) throw new ValidationError(`${fieldPath(field, 'price_unit_id')}: pricing unit ${id} not found`, fieldPath(field, 'price_unit_id'))
  return unit
}

function checkPriceUnitType(p: PriceInput, field: string): void {
  if (p.price_unit_type === undefined || (p.price_unit_type === 'CUSTOM') === (p.price_unit_id !== undefined)) return
  const path = fieldPath(field, 'price_unit_type')
  throw new ValidationError(`${path}: ${p.price_unit_type} ${p.price_unit_type === 'CUSTOM' ? 'requires' : 'is not allowed with'} price_unit_id`, path)
}

/** A price is written either in its currency (amount, tiers) or in a pricing unit (price_unit_*), never both. */
function checkAmountFields(p: PriceInput, inUnits: boolean, field: string): void {
  const [amount, tiers] = inUnits ? (['price_unit_amount', 'price_unit_tiers'] as const) : (['amount', 'tiers'] as const)
  const stray = (inUnits ? (['amount', 'tiers'] as const) : (['price_unit_amount', 'price_unit_tiers'] as const)).find((f) => p[f] !== undefined)
  if (stray) {
    const why = inUnits ? 'is not allowed with price_unit_id (send price_unit_amount or price_unit_tiers)' : 'requires price_unit_id'
    throw new ValidationError(`${fieldPath(field, stray)} ${why}`, fieldPath(field, stray))
  }
  if (p.billing_model !== 'TIERED' && p[amount] === undefined) throw new ValidationError(`${fieldPath(field, amount)} is required`, fieldPath(field, amount))
  if (p.billing_model === 'TIERED' && (!p[tiers] || !p.tier_mode)) {
    throw new ValidationError(`${field || 'price'}: TIERED prices need tier_mode and ${tiers}`, fieldPath(field, tiers))
  }
}

const convertTiers = (tiers: PriceTier[], rate: string): PriceTier[] =>
  tiers.map((t) => ({
    up_to: t.up_to,
    unit_amount: D(t.unit_amount).times(rate).toString(),
    ...(t.flat_amount ? { flat_amount: D(t.flat_amount).times(rate).toString() } : {}),
  }))

/** The stored columns; a unit price also carries its amount and tiers converted to the currency, for display. */
function priceColumns(p: PriceInput, unit: PricingUnit | null): PriceColumns & Pick<Price, 'price_unit_id'> {
  const inUnits = unit !== null
  return {
    type: p.type,
    billing_model: p.billing_model,
    tier_mode: p.tier_mode ?? null,
    amount: inUnits ? (p.price_unit_amount === undefined ? '0' : D(p.price_unit_amount).times(unit.conversion_rate).toString()) : (p.amount ?? '0'),
    currency: p.currency.toUpperCase(),
    tiers: inUnits ? (p.price_unit_tiers ? convertTiers(p.price_unit_tiers, unit.conversion_rate) : null) : (p.tiers ?? null),
    transform_quantity: p.transform_quantity ? { divide_by: p.transform_quantity.divide_by, round: p.transform_quantity.round ?? 'up' } : null,
    min_quantity: p.min_quantity ?? null,
    price_unit: unit?.code ?? null,
    price_unit_id: unit?.id ?? null,
    price_unit_amount: inUnits ? (p.price_unit_amount ?? null) : null,
    price_unit_tiers: inUnits ? (p.price_unit_tiers ?? null) : null,
    conversion_rate: unit?.conversion_rate ?? null,
  }
}

/** The Price row for an input that passed validatePriceInput; the caller flushes. */
export function buildPrice(em: EntityManager, scope: Scope, userId: string, entity: { type: 'PLAN' | 'ADDON'; id: string }, p: PriceInput, sequence: number): Price {
  const unit = resolvedUnits.get(p) ?? null
  if (p.price_unit_id && !unit) throw new Error('buildPrice: the input has a price_unit_id but did not pass validatePriceInput')
  return em.create(PriceSchema, {
    id: newId('price'),
    ...scope,
    entity_type: entity.type,
    entity_id: entity.id,
    ...priceColumns(p, unit),
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
  })
}
