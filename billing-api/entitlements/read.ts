// The read model of entitlements: each with its feature embedded. Plans and add-ons include
// their entitlements through listEntitlements.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { iso, serializeBase, pick } from '../db/common.js'
import { FeatureSchema, type Feature } from '../features/feature.entity.js'
import { serializeFeature } from '../features/index.js'
import { EntitlementSchema, type Entitlement, type EntitlementEntityType } from './entitlement.entity.js'

export function serializeEntitlement(e: Entitlement, feature: Feature) {
  return {
    ...serializeBase(e),
    entity_type: e.entity_type,
    entity_id: e.entity_id,
    plan_id: e.entity_type === 'PLAN' ? e.entity_id : null,
    ...pick(e, ['feature_id', 'is_enabled', 'usage_limit', 'is_soft_limit', 'static_value', 'usage_reset_period', 'display_order']),
    start_date: iso(e.start_date),
    end_date: iso(e.end_date),
    feature: serializeFeature(feature),
    feature_type: feature.type,
    parent_entitlement_id: null,
    plan: null,
    addon: null,
  }
}

export type EntitlementResponse = ReturnType<typeof serializeEntitlement>

/** Serializes entitlements with one query for all their features. */
export async function serializeEntitlements(em: EntityManager, scope: Scope, entitlements: Entitlement[]): Promise<EntitlementResponse[]> {
  const ids = [...new Set(entitlements.map((e) => e.feature_id))]
  const features = ids.length ? await em.find(FeatureSchema, { id: { $in: ids }, ...scope }) : []
  const byId = new Map(features.map((f) => [f.id, f]))
  return entitlements.map((e) => serializeEntitlement(e, byId.get(e.feature_id)!))
}

export const ENTITLEMENT_ORDER = { display_order: 'asc', created_at: 'asc', id: 'asc' } as const

/** The entitlements of several plans (or add-ons) at once, keyed by their id. */
export async function listEntitlementsByEntity(
  em: EntityManager, scope: Scope, entityType: EntitlementEntityType, entityIds: string[],
): Promise<Map<string, EntitlementResponse[]>> {
  const byEntity = new Map<string, EntitlementResponse[]>(entityIds.map((id) => [id, []]))
  if (!entityIds.length) return byEntity
  const rows = await em.find(
    EntitlementSchema,
    { ...scope, entity_type: entityType, entity_id: { $in: entityIds }, status: { $ne: 'deleted' } },
    { orderBy: ENTITLEMENT_ORDER },
  )
  const serialized = await serializeEntitlements(em, scope, rows)
  rows.forEach((row, i) => byEntity.get(row.entity_id)!.push(serialized[i]))
  return byEntity
}

export async function listEntitlements(em: EntityManager, scope: Scope, entityType: EntitlementEntityType, entityId: string): Promise<EntitlementResponse[]> {
  return (await listEntitlementsByEntity(em, scope, entityType, [entityId])).get(entityId)!
}
