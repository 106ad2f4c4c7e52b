// Which entitlements a customer holds right now: the grants of the plans of its live
// subscriptions (ACTIVE or TRIALING, started, not ended) and of the add-ons attached to them,
// each entitlement live at `at` (published, inside its start_date/end_date).
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { AddonAssociationSchema, type AddonAssociation } from '../subscriptions/addon-association.entity.js'
import { SubscriptionSchema, type Subscription, type SubscriptionStatus } from '../subscriptions/subscription.entity.js'
import { EntitlementSchema, type Entitlement } from './entitlement.entity.js'
import { ENTITLEMENT_ORDER } from './read.js'

export interface CustomerGrant {
  entitlement: Entitlement
  /** the subscription through which the customer holds it (its anchor aligns the reset period) */
  subscription: Subscription
}

const LIVE_STATUSES: SubscriptionStatus[] = ['ACTIVE', 'TRIALING']

/** The customer's live grants of `featureIds`, in display order. */
export async function customerGrants(em: EntityManager, scope: Scope, customerId: string, featureIds: string[], at: Date): Promise<CustomerGrant[]> {
  if (featureIds.length === 0) return []
  const subs = await em.find(SubscriptionSchema, {
    ...scope, customer_id: customerId, subscription_status: { $in: LIVE_STATUSES }, start_date: { $lte: at },
    $or: [{ end_date: null }, { end_date: { $gt: at } }],
  }, { orderBy: { start_date: 'asc', id: 'asc' } })
  if (subs.length === 0) return []
  const subsOfPlan = new Map<string, Subscription[]>()
  for (const s of subs) subsOfPlan.set(s.plan_id, [...(subsOfPlan.get(s.plan_id) ?? []), s])
  // Attached add-ons and the entitlements in one round trip: every add-on grant of the feature
  // is read, and those of add-ons not attached are dropped below.
  const [addons, candidates] = await Promise.all([
    em.fork().find(AddonAssociationSchema, {
      ...scope, subscription_id: { $in: subs.map((s) => s.id) }, addon_status: 'active', start_date: { $lte: at },
      $or: [{ end_date: null }, { end_date: { $gt: at } }],
    }),
    em.find(EntitlementSchema, {
      ...scope, status: 'published', feature_id: { $in: featureIds },
      $or: [{ entity_type: 'PLAN', entity_id: { $in: [...subsOfPlan.keys()] } }, { entity_type: 'ADDON' }],
      $and: [{ $or: [{ start_date: null }, { start_date: { $lte: at } }] }, { $or: [{ end_date: null }, { end_date: { $gt: at } }] }],
    }, { orderBy: ENTITLEMENT_ORDER }),
  ])
  return grantsOf(subs, addons, candidates, at)
}

/**
 * Pure: the grants of the customer's subscriptions `subs` (ACTIVE or TRIALING, by start_date
 * then id) and their add-on associations `addons`, among the published `entitlements` (display
 * order), live at `at`. The one rule, shared by the lookup above and the live check's cache.
 */
export function grantsOf(subs: Subscription[], addons: AddonAssociation[], entitlements: Entitlement[], at: Date): CustomerGrant[] {
  const live = (x: { start_date: Date | null; end_date: Date | null }) => (x.start_date === null || x.start_date <= at) && (x.end_date === null || x.end_date > at)
  const liveSubs = subs.filter((s) => LIVE_STATUSES.includes(s.subscription_status) && live(s))
  const subsOfPlan = new Map<string, Subscription[]>()
  for (const s of liveSubs) subsOfPlan.set(s.plan_id, [...(subsOfPlan.get(s.plan_id) ?? []), s])
  const subOfAddon = new Map<string, Subscription>()
  for (const a of addons) {
    if (a.addon_status !== 'active' || !live(a) || subOfAddon.has(a.addon_id)) continue
    const s = liveSubs.find((x) => x.id === a.subscription_id)
    if (s) subOfAddon.set(a.addon_id, s)
  }
  const out: CustomerGrant[] = []
  for (const e of entitlements) {
    if (e.status !== 'published' || !live(e)) continue
    // A plan two subscriptions share grants once per subscription (limits add up, as billing does).
    const holders = e.entity_type === 'PLAN' ? subsOfPlan.get(e.entity_id) ?? [] : subOfAddon.has(e.entity_id) ? [subOfAddon.get(e.entity_id)!] : []
    for (const subscription of holders) out.push({ entitlement: e, subscription })
  }
  return out
}
