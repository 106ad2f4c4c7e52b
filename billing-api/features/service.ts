// Feature use cases: create (with a generated lookup key when none is given), read, list,
// update and archive. Every write publishes its system event in the same transaction.
import type { EntityManager } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { assignFeatureToGroup } from '../groups/index.js'
import type { Page } from '../http/schemas.js'
import { MeterSchema } from '../meters/meter.entity.js'
import { FeatureSchema, type Feature, type FeatureType, type ReportingUnit } from './feature.entity.js'
import { normalizeAlertSettings, normalizeReportingUnit, validateFeatureShape, type AlertSettingsInput } from './feature-rules.js'
import { assertLookupKeyFree, firstFreeLookupKey, slugify } from '../db/lookup-key.js'
import { assertChangeable, findInScope, requireReference, publishedBy } from '../db/scoped-records.js'
import { serializeFeature } from './serialize.js'

export interface CreateFeatureInput {
  name: string
  type: FeatureType
  lookup_key?: string
  description?: string
  meter_id?: string
  group_id?: string
  unit_singular?: string
  unit_plural?: string
  alert_settings?: AlertSettingsInput
  reporting_unit?: ReportingUnit
  metadata?: Record<string, string>
}

/** Omitted fields stay as they are; null clears a nullable field. type, meter_id and lookup_key are fixed at creation. */
export interface UpdateFeatureInput {
  name?: string
  description?: string | null
  group_id?: string | null
  unit_singular?: string | null
  unit_plural?: string | null
  alert_settings?: AlertSettingsInput | null
  reporting_unit?: ReportingUnit | null
  metadata?: Record<string, string>
}

export interface FeatureFilter extends Page {
  type?: FeatureType
  lookup_key?: string
  meter_id?: string
}

/** Flushes first: the payload carries the timestamps the database assigned. */
async function publish(em: EntityManager, scope: Scope, event: 'created' | 'updated' | 'deleted', f: Feature): Promise<void> {
  await em.flush()
  publishSystemEvent(em, scope, { event_name: `feature.${event}`, entity_type: 'feature', entity_id: f.id, payload: serializeFeature(f) })
}

async function chooseLookupKey(em: EntityManager, scope: Scope, input: CreateFeatureInput): Promise<string> {
  // Generated keys are computed from the keys already taken, so creates in one environment
  // take turns (the lock is released at commit); features are created rarely.
  await em.execute('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`features:${scope.tenant_id}:${scope.environment_id}`])
  if (input.lookup_key !== undefined) {
    await assertLookupKeyFree(em, FeatureSchema, scope, input.lookup_key, 'feature')
    return input.lookup_key
  }
  return firstFreeLookupKey(em, FeatureSchema, scope, slugify(input.name) || 'feature')
}

export async function createFeature(em: EntityManager, scope: Scope, userId: string, input: CreateFeatureInput): Promise<Feature> {
  return em.transactional(async (tx) => {
    const settings = {
      type: input.type,
      meter_id: input.meter_id ?? null,
      unit_singular: input.unit_singular ?? null,
      unit_plural: input.unit_plural ?? null,
      alert_settings: normalizeAlertSettings(input.alert_settings),
      reporting_unit: normalizeReportingUnit(input.reporting_unit),
    }
    validateFeatureShape(settings)
    if (settings.meter_id) await requireReference(tx, MeterSchema, scope, settings.meter_id, 'meter', 'meter_id')
    const feature = tx.create(FeatureSchema, {
      id: newId('feat'),
      ...scope,
      ...settings,
      name: input.name,
      lookup_key: await chooseLookupKey(tx, scope, input),
      description: input.description ?? null,
      group_id: null,
      ...publishedBy(userId, input.metadata),
    })
    if (input.group_id !== undefined) await assignFeatureToGroup(tx, scope, feature, input.group_id)
    await publish(tx, scope, 'created', feature)
    return feature
  })
}

export function getFeature(em: EntityManager, scope: Scope, id: string): Promise<Feature> {
  return findInScope(em, FeatureSchema, scope, id, 'feature')
}

/** Published features only; archived ones are still readable by id. */
export async function listFeatures(em: EntityManager, scope: Scope, q: FeatureFilter): Promise<{ items: Feature[]; total: number }> {
  const where: Record<string, unknown> = { ...scope, status: 'published' }
  if (q.type) where.type = q.type
  if (q.lookup_key) where.lookup_key = q.lookup_key
  if (q.meter_id) where.meter_id = q.meter_id
  const [items, total] = await em.findAndCount(FeatureSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
  return { items, total }
}

export async function updateFeature(
  em: EntityManager, scope: Scope, userId: string, id: string, input: UpdateFeatureInput,
): Promise<Feature> {
  return em.transactional(async (tx) => {
    const feature = await getFeature(tx, scope, id)
    assertChangeable(feature, 'feature')
    const { group_id, alert_settings, reporting_unit, ...plain } = input
    tx.assign(feature, { ...plain, updated_by: userId })
    if (alert_settings !== undefined) feature.alert_settings = normalizeAlertSettings(alert_settings)
    if (reporting_unit !== undefined) feature.reporting_unit = normalizeReportingUnit(reporting_unit)
    validateFeatureShape(feature)
    if (group_id !== undefined) await assignFeatureToGroup(tx, scope, feature, group_id)
    await publish(tx, scope, 'updated', feature)
    return feature
  })
}

/** Archives the feature: entitlements that grant it keep pointing at it, new ones cannot. Repeating is a no-op. */
export async function archiveFeature(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const feature = await getFeature(tx, scope, id)
    if (feature.status === 'archived') return
    feature.status = 'archived'
    feature.updated_by = userId
    await publish(tx, scope, 'deleted', feature)
  })
}
