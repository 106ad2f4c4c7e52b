// Entitlement use cases. An entitlement grants one published feature on one published plan or
// add-on of the same scope; each (plan or add-on, feature) pair has at most one live entitlement.
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import { AddonSchema } from '../addons/addon.entity.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { FeatureSchema, type Feature, type FeatureType } from '../features/feature.entity.js'
import { findInScope, requireReference } from '../db/scoped-records.js'
import type { Page } from '../http/schemas.js'
import { PlanSchema } from '../plans/plan.entity.js'
import { EntitlementSchema, type Entitlement, type EntitlementEntityType, type UsageResetPeriod } from './entitlement.entity.js'
import { validateEntitlementValues } from './entitlement-rules.js'
import { ENTITLEMENT_ORDER, serializeEntitlement, serializeEntitlements, type EntitlementResponse } from './read.js'

/** For the plan and add-on reads. */
export { listEntitlements, listEntitlementsByEntity, type EntitlementResponse } from './read.js'

/** Omitted fields stay as they are (on create: take their defaults); null clears a nullable field. */
export interface EntitlementValues {
  is_enabled?: boolean
  usage_limit?: number | null
  is_soft_limit?: boolean
  static_value?: string | null
  usage_reset_period?: UsageResetPeriod | null
  display_order?: number
  start_date?: string | null
  end_date?: string | null
  metadata?: Record<string, string>
}

export interface CreateEntitlementInput extends EntitlementValues {
  entity_type: EntitlementEntityType
  entity_id: string
  feature_id: string
  /** the feature's type, as Flexprice's SDK sends it: checked, not stored */
  feature_type?: FeatureType
}

export interface EntitlementFilter extends Page {
  entity_type?: EntitlementEntityType
  entity_id?: string
  feature_id?: string
  /** POST /entitlements/search: any of these (plan_ids are PLAN grantors) */
  entity_ids?: string[]
  plan_ids?: string[]
  feature_ids?: string[]
}

export interface EntitlementWithFeature {
  entitlement: Entitlement
  feature: Feature
}

/** Flushes first: the payload carries the timestamps the database assigned. */
async function publish(em: EntityManager, scope: Scope, event: 'created' | 'updated' | 'deleted', e: Entitlement, feature: Feature): Promise<void> {
  await em.flush()
  publishSystemEvent(em, scope, { event_name: `entitlement.${event}`, entity_type: 'entitlement', entity_id: e.id, payload: serializeEntitlement(e, feature) })
}

const toDate = (v: string | null | undefined) => (v == null ? null : new Date(v))

/** The request's values as columns; only the fields the request names. */
function columns(v: EntitlementValues): Partial<Entitlement> {
  const out: Partial<Entitlement> = {}
  for (const k of ['is_enabled', 'usage_limit', 'is_soft_limit', 'static_value', 'usage_reset_period', 'display_order', 'metadata'] as const) {
    if (v[k] !== undefined) (out as Record<string, unknown>)[k] = v[k]
  }
  if (v.start_date !== undefined) out.start_date = toDate(v.start_date)
  if (v.end_date !== undefined) out.end_date = toDate(v.end_date)
  return out
}

async function requireGrantingEntity(em: EntityManager, scope: Scope, type: EntitlementEntityType, id: string): Promise<void> {
  if (type === 'PLAN') await requireReference(em, PlanSchema, scope, id, 'plan', 'entity_id')
  else await requireReference(em, AddonSchema, scope, id, 'addon', 'entity_id')
}

export async function createEntitlement(em: EntityManager, scope: Scope, userId: string, input: CreateEntitlementInput): Promise<EntitlementWithFeature> {
  return em.transactional(async (tx) => {
    await requireGrantingEntity(tx, scope, input.entity_type, input.entity_id)
    const feature = await requireReference(tx, FeatureSchema, scope, input.feature_id, 'feature', 'feature_id')
    if (input.feature_type !== undefined && input.feature_type !== feature.type) {
      throw new ValidationError(`feature_type: feature ${feature.id} is ${feature.type}, not ${input.feature_type}`, 'feature_type')
    }
    const live = { ...scope, entity_type: input.entity_type, entity_id: input.entity_id, feature_id: input.feature_id, status: { $ne: 'deleted' } }
    if (await tx.count(EntitlementSchema, live)) {
      throw new AlreadyExistsError(`${input.entity_type.toLowerCase()} ${input.entity_id} already has an entitlement for feature ${input.feature_id}`)
    }
    const entitlement = tx.create(EntitlementSchema, {
      id: newId('ent'),
      ...scope,
      entity_type: input.entity_type,
      entity_id: input.entity_id,
      feature_id: input.feature_id,
      is_enabled: true,
      usage_limit: null,
      is_soft_limit: false,
      static_value: null,
      usage_reset_period: feature.type === 'metered' ? 'MONTHLY' : null,
      display_order: 0,
      start_date: null,
      end_date: null,
      metadata: {},
      ...columns(input),
      status: 'published',
      created_by: userId,
      updated_by: userId,
    })
    validateEntitlementValues(feature, entitlement)
    await publish(tx, scope, 'created', entitlement, feature)
    return { entitlement, feature }
  })
}

export async function getEntitlement(em: EntityManager, scope: Scope, id: string): Promise<EntitlementWithFeature> {
  const entitlement = await findInScope(em, EntitlementSchema, scope, id, 'entitlement')
  const feature = await em.findOneOrFail(FeatureSchema, { id: entitlement.feature_id, ...scope })
  return { entitlement, feature }
}

export async function listEntitlementPage(em: EntityManager, scope: Scope, q: EntitlementFilter): Promise<{ items: EntitlementResponse[]; total: number }> {
  const where: Record<string, unknown> = { ...scope, status: { $ne: 'deleted' } }
  for (const k of ['entity_type', 'entity_id', 'feature_id'] as const) if (q[k]) where[k] = q[k]
  const and: Record<string, unknown>[] = []
  if (q.plan_ids) {
    if (q.entity_type === 'ADDON') throw new ValidationError('plan_ids: plans grant PLAN entitlements, not ADDON ones', 'plan_ids')
    where.entity_type = 'PLAN'
    and.push({ entity_id: { $in: q.plan_ids } })
  }
  if (q.entity_ids) and.push({ entity_id: { $in: q.entity_ids } })
  if (q.feature_ids) and.push({ feature_id: { $in: q.feature_ids } })
  if (and.length) where.$and = and
  const [rows, total] = await em.findAndCount(EntitlementSchema, where, { orderBy: ENTITLEMENT_ORDER, limit: q.limit, offset: q.offset })
  return { items: await serializeEntitlements(em, scope, rows), total }
}

/** POST /entitlements/bulk: all of them or none. */
export async function createEntitlements(em: EntityManager, scope: Scope, userId: string, inputs: CreateEntitlementInput[]): Promise<EntitlementWithFeature[]> {
  return em.transactional(async (tx) => {
    const created: EntitlementWithFeature[] = []
    for (const input of inputs) created.push(await createEntitlement(tx, scope, userId, input))
    return created
  })
}

/** The entitlements an add-on grants; 404 when there is no such add-on. */
export async function listAddonEntitlements(em: EntityManager, scope: Scope, addonId: string, page: Page): Promise<{ items: EntitlementResponse[]; total: number }> {
  await findInScope(em, AddonSchema, scope, addonId, 'addon')
  return listEntitlementPage(em, scope, { ...page, entity_type: 'ADDON', entity_id: addonId })
}

export async function updateEntitlement(em: EntityManager, scope: Scope, userId: string, id: string, input: EntitlementValues): Promise<EntitlementWithFeature> {
  return em.transactional(async (tx) => {
    const { entitlement, feature } = await getEntitlement(tx, scope, id)
    tx.assign(entitlement, { ...columns(input), updated_by: userId })
    validateEntitlementValues(feature, entitlement)
    await publish(tx, scope, 'updated', entitlement, feature)
    return { entitlement, feature }
  })
}

/** Deleted, not archived: the (plan or add-on, feature) pair can be granted again. */
export async function deleteEntitlement(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const { entitlement, feature } = await getEntitlement(tx, scope, id)
    entitlement.status = 'deleted'
    entitlement.updated_by = userId
    await publish(tx, scope, 'deleted', entitlement, feature)
  })
}
