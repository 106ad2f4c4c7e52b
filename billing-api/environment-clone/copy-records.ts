// The target copy of a source record: same values, a new id, the target environment, the
// cloning user, and references remapped to their target ids. Pure.
import type { BaseRecord } from '../db/common.js'
import type { CreditGrant } from '../credit-grants/credit-grant.entity.js'
import type { Entitlement } from '../entitlements/entitlement.entity.js'
import type { Feature } from '../features/feature.entity.js'
import type { Meter } from '../meters/meter.entity.js'
import type { Plan } from '../plans/plan.entity.js'
import type { Price } from '../plans/price.entity.js'
import type { PricingUnit } from '../pricing-units/pricing-unit.entity.js'
import type { CloneMap } from './clone-map.js'

export interface Target {
  id: string
  environment_id: string
  actor: string
}

export type Copied<T extends BaseRecord> = Omit<T, 'created_at' | 'updated_at'>

function base<T extends BaseRecord>(src: T, t: Target): Copied<T> {
  const { created_at, updated_at, ...rest } = src
  void created_at
  void updated_at
  return { ...rest, id: t.id, environment_id: t.environment_id, metadata: { ...src.metadata }, created_by: t.actor, updated_by: t.actor }
}

export const copyMeter = (src: Meter, t: Target): Copied<Meter> => ({
  ...base(src, t), aggregation: { ...src.aggregation }, filters: src.filters.map((f) => ({ key: f.key, values: [...f.values] })),
})

export const copyPricingUnit = (src: PricingUnit, t: Target): Copied<PricingUnit> => base(src, t)

/** Groups are not cloned: the copy belongs to none. */
export const copyFeature = (src: Feature, t: Target, map: CloneMap): Copied<Feature> => ({
  ...base(src, t),
  meter_id: src.meter_id ? map.require('meter', src.meter_id) : null,
  group_id: null,
  alert_settings: src.alert_settings ? { ...src.alert_settings } : null,
  reporting_unit: src.reporting_unit ? { ...src.reporting_unit } : null,
})

export const copyPlan = (src: Plan, t: Target): Copied<Plan> => base(src, t)

export const copyPrice = (src: Price, t: Target, planId: string, map: CloneMap, keepLookupKey: boolean): Copied<Price> => ({
  ...base(src, t),
  entity_id: planId,
  meter_id: src.meter_id ? map.require('meter', src.meter_id) : null,
  price_unit_id: src.price_unit_id ? map.require('pricing_unit', src.price_unit_id) : null,
  lookup_key: keepLookupKey ? src.lookup_key : null,
  tiers: src.tiers ? src.tiers.map((x) => ({ ...x })) : null,
  price_unit_tiers: src.price_unit_tiers ? src.price_unit_tiers.map((x) => ({ ...x })) : null,
  transform_quantity: src.transform_quantity ? { ...src.transform_quantity } : null,
})

export const copyEntitlement = (src: Entitlement, t: Target, planId: string, map: CloneMap): Copied<Entitlement> => ({
  ...base(src, t),
  entity_id: planId,
  feature_id: map.require('feature', src.feature_id),
})

export const copyCreditGrant = (src: CreditGrant, t: Target, planId: string): Copied<CreditGrant> => ({ ...base(src, t), plan_id: planId })
