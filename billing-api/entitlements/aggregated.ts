// GET /customers/{id}/entitlements and GET /subscriptions/{id}/entitlements (Flexprice's SDK):
// per feature, what the customer's live grants add up to now (access.ts combineGrants, the rule
// the entitlement check uses) and the grants it comes from.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Clock } from '../../platform/clock.js'
import type { Scope } from '../db/scope.js'
import { findInScope } from '../db/scoped-records.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { FeatureSchema, type Feature } from '../features/feature.entity.js'
import { serializeFeature } from '../features/index.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { combineGrants } from './access.js'
import { customerGrants, type CustomerGrant } from './customer-grants.js'
import { EntitlementSchema } from './entitlement.entity.js'

/** A sum of limits as the JSON integer the SDK reads; each limit is a safe integer, their sum must be too. */
function asInteger(limit: string | null): number | null {
  if (limit === null) return null
  const n = Number(limit)
  if (!Number.isSafeInteger(n)) throw new Error(`combined usage_limit ${limit} is beyond a safe JSON integer`)
  return n
}

function aggregate(grants: CustomerGrant[], features: Map<string, Feature>) {
  const byFeature = new Map<string, CustomerGrant[]>()
  for (const g of grants) byFeature.set(g.entitlement.feature_id, [...(byFeature.get(g.entitlement.feature_id) ?? []), g])
  return [...byFeature].map(([featureId, held]) => {
    const combined = combineGrants(held.map((g) => g.entitlement))
    return {
      feature: serializeFeature(features.get(featureId)!),
      entitlement: {
        is_enabled: combined.is_enabled, is_soft_limit: combined.is_soft_limit, usage_limit: asInteger(combined.usage_limit),
        usage_reset_period: combined.usage_reset_period,
        static_values: [...new Set(held.filter((g) => g.entitlement.is_enabled && g.entitlement.static_value !== null).map((g) => g.entitlement.static_value!))],
      },
      sources: held.map(({ entitlement: e, subscription }) => ({
        entitlement_id: e.id, entity_type: e.entity_type, entity_id: e.entity_id, entity_name: null, subscription_id: subscription.id,
        is_enabled: e.is_enabled, usage_limit: e.usage_limit, static_value: e.static_value, usage_reset_period: e.usage_reset_period, quantity: null,
      })),
    }
  })
}

async function grantsNow(em: EntityManager, clock: Clock, scope: Scope, customerId: string): Promise<{ grants: CustomerGrant[]; features: Map<string, Feature> }> {
  const granted = await em.find(EntitlementSchema, { ...scope, status: 'published' }, { fields: ['feature_id'] })
  const grants = await customerGrants(em, scope, customerId, [...new Set(granted.map((e) => e.feature_id))], clock.now())
  const ids = [...new Set(grants.map((g) => g.entitlement.feature_id))]
  const features = ids.length ? await em.find(FeatureSchema, { ...scope, id: { $in: ids } }) : []
  return { grants, features: new Map(features.map((f) => [f.id, f])) }
}

export async function customerEntitlements(em: EntityManager, clock: Clock, scope: Scope, customerId: string) {
  await findInScope(em, CustomerSchema, scope, customerId, 'customer')
  const { grants, features } = await grantsNow(em, clock, scope, customerId)
  return { customer_id: customerId, features: aggregate(grants, features) }
}

/** The same, from this subscription's grants only. */
export async function subscriptionEntitlements(em: EntityManager, clock: Clock, scope: Scope, subscriptionId: string) {
  const sub = await findInScope(em, SubscriptionSchema, scope, subscriptionId, 'subscription')
  const { grants, features } = await grantsNow(em, clock, scope, sub.customer_id)
  return { subscription_id: sub.id, plan_id: sub.plan_id, features: aggregate(grants.filter((g) => g.subscription.id === sub.id), features) }
}
