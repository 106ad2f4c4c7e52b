// Group use cases. A group collects prices or features; its members must exist in its scope.
// Feature membership is mirrored on features.group_id (see feature-membership.ts).
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { assertLookupKeyFree } from '../db/lookup-key.js'
import { findInScope } from '../db/scoped-records.js'
import type { Page } from '../http/schemas.js'
import { PriceSchema } from '../plans/price.entity.js'
import { releaseGroupFeatures, setGroupFeatures } from './feature-membership.js'
import { GroupSchema, type Group, type GroupEntityType } from './group.entity.js'
import { serializeGroup } from './serialize.js'

export interface CreateGroupInput {
  name: string
  entity_type: GroupEntityType
  lookup_key?: string
  entity_ids?: string[]
  metadata?: Record<string, string>
}

/** entity_type and lookup_key are fixed at creation; entity_ids replaces the member list. */
export interface UpdateGroupInput {
  name?: string
  entity_ids?: string[]
  metadata?: Record<string, string>
}

export interface GroupFilter extends Page {
  entity_type?: GroupEntityType
  lookup_key?: string
}

/** Flushes first: the payload carries the timestamps the database assigned. */
async function publish(em: EntityManager, scope: Scope, event: 'created' | 'updated' | 'deleted', g: Group): Promise<void> {
  await em.flush()
  publishSystemEvent(em, scope, { event_name: `group.${event}`, entity_type: 'group', entity_id: g.id, payload: serializeGroup(g) })
}

async function setMembers(em: EntityManager, scope: Scope, group: Group, ids: string[]): Promise<void> {
  if (group.entity_type === 'feature') return setGroupFeatures(em, scope, group, ids)
  const prices = await em.find(PriceSchema, { id: { $in: ids }, ...scope, status: { $ne: 'deleted' } })
  const missing = ids.filter((id) => !prices.some((p) => p.id === id))
  if (missing.length) throw new ValidationError(`entity_ids: price ${missing.join(', ')} not found`, 'entity_ids')
  group.entity_ids = [...ids]
}

export async function createGroup(em: EntityManager, scope: Scope, userId: string, input: CreateGroupInput): Promise<Group> {
  return em.transactional(async (tx) => {
    if (input.lookup_key !== undefined) await assertLookupKeyFree(tx, GroupSchema, scope, input.lookup_key, 'group')
    const group = tx.create(GroupSchema, {
      id: newId('group'), ...scope, name: input.name, lookup_key: input.lookup_key ?? null, entity_type: input.entity_type,
      entity_ids: [], status: 'published', metadata: input.metadata ?? {}, created_by: userId, updated_by: userId,
    })
    await setMembers(tx, scope, group, input.entity_ids ?? [])
    await publish(tx, scope, 'created', group)
    return group
  })
}

export function getGroup(em: EntityManager, scope: Scope, id: string): Promise<Group> {
  return findInScope(em, GroupSchema, scope, id, 'group')
}

export async function listGroups(em: EntityManager, scope: Scope, q: GroupFilter): Promise<{ items: Group[]; total: number }> {
  const where: Record<string, unknown> = { ...scope, status: 'published' }
  if (q.entity_type) where.entity_type = q.entity_type
  if (q.lookup_key) where.lookup_key = q.lookup_key
  const [items, total] = await em.findAndCount(GroupSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
  return { items, total }
}

export async function updateGroup(em: EntityManager, scope: Scope, userId: string, id: string, input: UpdateGroupInput): Promise<Group> {
  return em.transactional(async (tx) => {
    const group = await getGroup(tx, scope, id)
    const { entity_ids, ...plain } = input
    tx.assign(group, { ...plain, updated_by: userId })
    if (entity_ids !== undefined) await setMembers(tx, scope, group, entity_ids)
    await publish(tx, scope, 'updated', group)
    return group
  })
}

/** Deletes the group (its lookup key becomes free) and takes its features out of it. */
export async function deleteGroup(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const group = await getGroup(tx, scope, id)
    if (group.entity_type === 'feature') await releaseGroupFeatures(tx, scope, group)
    group.status = 'deleted'
    group.updated_by = userId
    await publish(tx, scope, 'deleted', group)
  })
}
