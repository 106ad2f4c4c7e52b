// Environment clone (spec: "starts cloning of all published features, then plans, from a source
// to a target environment with id remapping"). What the copies need comes first: the meters
// and pricing units that published features and plan prices reference. Then every published
// feature, then every published plan with its published prices and its entitlements.
//
// Each record (a plan together with its prices and entitlements) is copied in one transaction
// that also claims its row in environment_clone_map, so a retry after a crash, a second run, or
// two runs at once copy nothing twice; a second run copies only what was published since.
// A feature, plan or pricing unit whose lookup key (code) the target already uses is not copied:
// the target's record stands in for it. A copied price whose lookup key the target already uses
// loses its lookup key (reported in `warnings`). Groups, add-ons and credit grants are not cloned.
import type { FilterQuery } from '@mikro-orm/core'
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import type { BaseRecord } from '../db/common.js'
import { EntitlementSchema, type Entitlement } from '../entitlements/entitlement.entity.js'
import { FeatureSchema, type Feature } from '../features/feature.entity.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import { PlanSchema, type Plan } from '../plans/plan.entity.js'
import { PriceSchema, type Price } from '../plans/price.entity.js'
import { PricingUnitSchema, type PricingUnit } from '../pricing-units/pricing-unit.entity.js'
import { CloneMap, claim, claimedTarget, type CloneEntityType, type ClonePair } from './clone-map.js'
import { copyEntitlement, copyFeature, copyMeter, copyPlan, copyPrice, copyPricingUnit, type Target } from './copy-records.js'

export interface CloneRequest extends ClonePair {
  actor: string
}

export interface CloneCounts {
  meters: number
  pricing_units: number
  features: number
  plans: number
  prices: number
  entitlements: number
}

export interface CloneProgress {
  phase: 'meters' | 'pricing_units' | 'features' | 'plans' | 'done'
  /** records handled so far, of `total` */
  done: number
  total: number
  /** records written to the target by this run */
  created: CloneCounts
  /** records mapped to a target record already there (an earlier run's copy, or the same lookup key) */
  existing: number
  warnings: string[]
}

const zero = (): CloneCounts => ({ meters: 0, pricing_units: 0, features: 0, plans: 0, prices: 0, entitlements: 0 })
const PREFIX: Record<CloneEntityType, string> = { meter: 'meter', pricing_unit: 'punit', feature: 'feat', plan: 'plan', price: 'price', entitlement: 'ent' }

/** What is cloned: published features and plans (with their prices and entitlements), and the meters and pricing units they reference. */
async function readSource(em: EntityManager, req: CloneRequest) {
  const source = { tenant_id: req.tenant_id, environment_id: req.source_environment_id }
  const published = <T extends BaseRecord>(where: object) => ({ ...source, status: 'published', ...where }) as FilterQuery<T>
  const order = { orderBy: { created_at: 'asc', id: 'asc' } } as const

  const features = await em.find(FeatureSchema, published<Feature>({}), order)
  const plans = await em.find(PlanSchema, published<Plan>({}), order)
  const planIds = plans.map((p) => p.id)
  const prices = await em.find(PriceSchema, published<Price>({ entity_type: 'PLAN', entity_id: { $in: planIds } }), { orderBy: { sequence: 'asc', id: 'asc' } })
  const featureIds = new Set(features.map((f) => f.id))
  // an entitlement to a feature that is not published is not cloned: its feature is not
  const entitlements = (await em.find(EntitlementSchema, published<Entitlement>({ entity_type: 'PLAN', entity_id: { $in: planIds } }), order))
    .filter((e) => featureIds.has(e.feature_id))
  const meterIds = [...new Set([...features, ...prices].flatMap((r) => (r.meter_id ? [r.meter_id] : [])))]
  const meters = await em.find(MeterSchema, { ...source, id: { $in: meterIds } } as FilterQuery<Meter>, order)
  const unitIds = [...new Set(prices.flatMap((p) => (p.price_unit_id ? [p.price_unit_id] : [])))]
  const units = await em.find(PricingUnitSchema, { ...source, id: { $in: unitIds } } as FilterQuery<PricingUnit>, order)
  return { features, plans, prices, entitlements, meters, units }
}

export async function runEnvironmentClone(orm: MikroORM, req: CloneRequest, onProgress: (p: CloneProgress) => Promise<void> = async () => {}): Promise<CloneProgress> {
  const em = orm.em.fork()
  const target = { tenant_id: req.tenant_id, environment_id: req.target_environment_id }
  const { features, plans, prices, entitlements, meters, units } = await readSource(em, req)
  const map = await CloneMap.load(em, req)
  const progress: CloneProgress = { phase: 'meters', done: 0, total: meters.length + units.length + features.length + plans.length, created: zero(), existing: 0, warnings: [] }
  const targetOf = (type: CloneEntityType): Target => ({ id: newId(PREFIX[type]), environment_id: req.target_environment_id, actor: req.actor })

  /**
   * One record: skipped when mapped already; else, in one transaction, claimed and written
   * (`write`), or mapped to the target's own record with the same lookup key (`sameKey`).
   */
  async function cloneOne(type: CloneEntityType, sourceId: string, sameKey: (tx: EntityManager) => Promise<string | undefined>, write: (tx: EntityManager, t: Target) => Promise<void>): Promise<void> {
    if (!map.get(type, sourceId)) {
      const outcome = await em.fork().transactional(async (tx) => {
        const existingId = await sameKey(tx)
        const t = targetOf(type)
        if (!(await claim(tx, req, type, sourceId, existingId ?? t.id, existingId === undefined))) return { id: undefined, created: false }
        if (existingId) return { id: existingId, created: false }
        await write(tx, t)
        return { id: t.id, created: true }
      })
      const id = outcome.id ?? (await claimedTarget(em, req, type, sourceId))
      if (!id) throw new Error(`environment clone: ${type} ${sourceId} was claimed but has no target`)
      map.set(type, sourceId, id)
      if (!outcome.created) progress.existing++
    } else {
      progress.existing++
    }
    progress.done++
    await onProgress(progress)
  }
  const none = async () => undefined

  for (const m of meters) {
    await cloneOne('meter', m.id, none, async (tx, t) => {
      tx.create(MeterSchema, copyMeter(m, t))
      progress.created.meters++
    })
  }
  progress.phase = 'pricing_units'
  for (const u of units) {
    await cloneOne('pricing_unit', u.id, async (tx) => (await tx.findOne(PricingUnitSchema, { ...target, code: u.code, status: { $ne: 'deleted' } }))?.id, async (tx, t) => {
      tx.create(PricingUnitSchema, copyPricingUnit(u, t))
      progress.created.pricing_units++
    })
  }
  progress.phase = 'features'
  for (const f of features) {
    await cloneOne('feature', f.id, async (tx) => (await tx.findOne(FeatureSchema, { ...target, lookup_key: f.lookup_key, status: { $ne: 'deleted' } }))?.id, async (tx, t) => {
      tx.create(FeatureSchema, copyFeature(f, t, map))
      progress.created.features++
    })
  }
  progress.phase = 'plans'
  for (const plan of plans) {
    const sameKey = async (tx: EntityManager) => (plan.lookup_key ? (await tx.findOne(PlanSchema, { ...target, lookup_key: plan.lookup_key, status: { $ne: 'deleted' } }))?.id : undefined)
    await cloneOne('plan', plan.id, sameKey, async (tx, t) => {
      const counts = { prices: 0, entitlements: 0 }
      tx.create(PlanSchema, copyPlan(plan, t))
      for (const price of prices.filter((p) => p.entity_id === plan.id)) {
        const taken = price.lookup_key !== null && (await tx.count(PriceSchema, { ...target, lookup_key: price.lookup_key, status: { $ne: 'deleted' } })) > 0
        if (taken) progress.warnings.push(`price ${price.id} of plan ${plan.id}: lookup_key ${price.lookup_key} is taken in the target environment; the copy has none`)
        const pt = targetOf('price')
        await claim(tx, req, 'price', price.id, pt.id, true)
        tx.create(PriceSchema, copyPrice(price, pt, t.id, map, !taken))
        counts.prices++
      }
      for (const e of entitlements.filter((x) => x.entity_id === plan.id)) {
        const et = targetOf('entitlement')
        await claim(tx, req, 'entitlement', e.id, et.id, true)
        tx.create(EntitlementSchema, copyEntitlement(e, et, t.id, map))
        counts.entitlements++
      }
      await tx.flush()
      // counted once the plan's transaction is certain to commit
      progress.created.plans++
      progress.created.prices += counts.prices
      progress.created.entitlements += counts.entitlements
    })
  }
  progress.phase = 'done'
  await onProgress(progress)
  return progress
}
