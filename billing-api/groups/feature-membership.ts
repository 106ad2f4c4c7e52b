// A feature's group is recorded twice: features.group_id (read with every feature) and the
// group's entity_ids (read with the group). These functions are the only writers of either,
// so the two cannot drift. A feature is in at most one group. Callers run inside a transaction;
// groups are locked before their member list is rewritten, so concurrent moves do not lose updates.
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { FeatureSchema, type Feature } from '../features/feature.entity.js'
import { GroupSchema, type Group } from './group.entity.js'

async function lockGroup(em: EntityManager, scope: Scope, id: string): Promise<Group | null> {
  return em.findOne(GroupSchema, { id, ...scope, status: { $ne: 'deleted' } }, { lockMode: LockMode.PESSIMISTIC_WRITE })
}

async function removeMember(em: EntityManager, scope: Scope, groupId: string, featureId: string): Promise<void> {
  const group = await lockGroup(em, scope, groupId)
  if (group) group.entity_ids = group.entity_ids.filter((id) => id !== featureId)
}

/** Moves a feature into `groupId` (a published feature group of the scope), or out of any group with null. */
export async function assignFeatureToGroup(em: EntityManager, scope: Scope, feature: Feature, groupId: string | null): Promise<void> {
  if (feature.group_id === groupId) return
  if (groupId !== null) {
    const group = await lockGroup(em, scope, groupId)
    if (!group) throw new ValidationError(`group_id: group ${groupId} not found`, 'group_id')
    if (group.status !== 'published') throw new ValidationError(`group_id: group ${groupId} is ${group.status}`, 'group_id')
    if (group.entity_type !== 'feature') throw new ValidationError(`group_id: group ${groupId} groups ${group.entity_type}s, not features`, 'group_id')
    group.entity_ids = [...group.entity_ids, feature.id]
  }
  if (feature.group_id) await removeMember(em, scope, feature.group_id, feature.id)
  feature.group_id = groupId
}

/** Makes `featureIds` (existing features of the scope) exactly the members of a feature group. */
export async function setGroupFeatures(em: EntityManager, scope: Scope, group: Group, featureIds: string[]): Promise<void> {
  const features = await em.find(FeatureSchema, { id: { $in: featureIds }, ...scope, status: { $ne: 'deleted' } })
  const missing = featureIds.filter((id) => !features.some((f) => f.id === id))
  if (missing.length) throw new ValidationError(`entity_ids: feature ${missing.join(', ')} not found`, 'entity_ids')
  const leaving = await em.find(FeatureSchema, { ...scope, group_id: group.id, id: { $nin: featureIds } })
  for (const f of leaving) f.group_id = null
  for (const f of features) {
    if (f.group_id && f.group_id !== group.id) await removeMember(em, scope, f.group_id, f.id)
    f.group_id = group.id
  }
  group.entity_ids = [...featureIds]
}

/** A deleted group lets go of its features. */
export async function releaseGroupFeatures(em: EntityManager, scope: Scope, group: Group): Promise<void> {
  const members = await em.find(FeatureSchema, { ...scope, group_id: group.id })
  for (const f of members) f.group_id = null
}
