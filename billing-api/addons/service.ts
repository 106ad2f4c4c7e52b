// Add-on use cases. An add-on is created with its prices in one transaction; its features are
// granted through entitlements (entity_type ADDON). Reads return both.
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { listEntitlementsByEntity, type EntitlementResponse } from '../entitlements/index.js'
import { publishSystemEvent } from '../events/index.js'
import { assertLookupKeyFree } from '../db/lookup-key.js'
import { assertChangeable, findInScope } from '../db/scoped-records.js'
import type { Page } from '../http/schemas.js'
import { PriceSchema, type Price } from '../plans/price.entity.js'
import { buildPrice, validatePriceInput, type PriceInput } from '../plans/index.js'
import { AddonSchema, type Addon } from './addon.entity.js'
import { serializeAddon } from './serialize.js'

export interface CreateAddonInput {
  name: string
  lookup_key: string
  description?: string
  prices?: PriceInput[]
  metadata?: Record<string, string>
}

/** lookup_key is fixed at creation; prices are not changed through the add-on. */
export interface UpdateAddonInput {
  name?: string
  description?: string | null
  metadata?: Record<string, string>
}

export interface AddonView {
  addon: Addon
  prices: Price[]
  entitlements: EntitlementResponse[]
}

/** Flushes first: the payload carries the timestamps the database assigned. */
async function publish(em: EntityManager, scope: Scope, event: 'created' | 'updated' | 'deleted', v: AddonView): Promise<void> {
  await em.flush()
  publishSystemEvent(em, scope, {
    event_name: `addon.${event}`, entity_type: 'addon', entity_id: v.addon.id, payload: serializeAddon(v.addon, v.prices, v.entitlements),
  })
}

/** Prices and entitlements of several add-ons with one query each. */
async function views(em: EntityManager, scope: Scope, addons: Addon[]): Promise<AddonView[]> {
  const ids = addons.map((a) => a.id)
  if (!ids.length) return []
  const prices = await em.find(PriceSchema, { ...scope, entity_type: 'ADDON', entity_id: { $in: ids }, status: 'published' }, { orderBy: { sequence: 'asc' } })
  const entitlements = await listEntitlementsByEntity(em, scope, 'ADDON', ids)
  return addons.map((addon) => ({ addon, prices: prices.filter((p) => p.entity_id === addon.id), entitlements: entitlements.get(addon.id)! }))
}

export async function createAddon(em: EntityManager, scope: Scope, userId: string, input: CreateAddonInput): Promise<AddonView> {
  return em.transactional(async (tx) => {
    await assertLookupKeyFree(tx, AddonSchema, scope, input.lookup_key, 'addon')
    const priceInputs = input.prices ?? []
    for (const [i, p] of priceInputs.entries()) await validatePriceInput(tx, scope, p, `prices[${i}]`)
    const addon = tx.create(AddonSchema, {
      id: newId('addon'), ...scope, name: input.name, lookup_key: input.lookup_key, description: input.description ?? null,
      status: 'published', metadata: input.metadata ?? {}, created_by: userId, updated_by: userId,
    })
    const prices = priceInputs.map((p, i) => buildPrice(tx, scope, userId, { type: 'ADDON', id: addon.id }, p, i + 1))
    const view = { addon, prices, entitlements: [] }
    await publish(tx, scope, 'created', view)
    return view
  })
}

export async function getAddon(em: EntityManager, scope: Scope, id: string): Promise<AddonView> {
  const [view] = await views(em, scope, [await findInScope(em, AddonSchema, scope, id, 'addon')])
  return view
}

export async function getAddonByLookupKey(em: EntityManager, scope: Scope, lookupKey: string): Promise<AddonView> {
  const addon = await em.findOne(AddonSchema, { ...scope, lookup_key: lookupKey, status: 'published' })
  if (!addon) throw new NotFoundError('addon with lookup_key', lookupKey)
  const [view] = await views(em, scope, [addon])
  return view
}

/** Published add-ons only; archived ones are still readable by id. */
export async function listAddons(em: EntityManager, scope: Scope, q: Page & { lookup_key?: string }): Promise<{ items: AddonView[]; total: number }> {
  const where: Record<string, unknown> = { ...scope, status: 'published' }
  if (q.lookup_key) where.lookup_key = q.lookup_key
  const [addons, total] = await em.findAndCount(AddonSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
  return { items: await views(em, scope, addons), total }
}

export async function updateAddon(em: EntityManager, scope: Scope, userId: string, id: string, input: UpdateAddonInput): Promise<AddonView> {
  return em.transactional(async (tx) => {
    const view = await getAddon(tx, scope, id)
    assertChangeable(view.addon, 'addon')
    tx.assign(view.addon, { ...input, updated_by: userId })
    await publish(tx, scope, 'updated', view)
    return view
  })
}

/** Archives the add-on; its prices and entitlements stay, for whoever already bought it. Repeating is a no-op. */
export async function archiveAddon(em: EntityManager, scope: Scope, userId: string, id: string): Promise<void> {
  await em.transactional(async (tx) => {
    const view = await getAddon(tx, scope, id)
    if (view.addon.status === 'archived') return
    view.addon.status = 'archived'
    view.addon.updated_by = userId
    await publish(tx, scope, 'deleted', view)
  })
}
