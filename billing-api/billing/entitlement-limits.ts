// Entitlement-adjusted usage quantities (spec: InvoiceLineItem.adjusted_entitlement_quantity).
// A metered feature (a feature with a meter) granted by the subscription's plan, or by an add-on
// attached to it, with a HARD usage_limit caps the billed usage of that meter's lines: a customer
// who cannot use more than the limit is never billed for more. Rules:
// - limits of every grant (plan and attached add-ons) add up;
// - a soft limit, or an enabled grant without a limit (unlimited), lifts the cap;
// - the cap applies to each invoice line's window (usage_reset_period is not applied to billing).
// quantity keeps the measured usage; adjusted_entitlement_quantity is what was priced.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { EntitlementSchema } from '../entitlements/entitlement.entity.js'
import { FeatureSchema } from '../features/feature.entity.js'
import { D } from '../pricing/index.js'
import { AddonAssociationSchema } from '../subscriptions/addon-association.entity.js'
import { plainFind } from '../db/plain-rows.js'
import type { Subscription } from '../subscriptions/subscription.entity.js'

export interface Grant {
  usage_limit: number | null
  is_soft_limit: boolean
}

/** Pure: the billing cap of one meter from its grants; null when nothing caps it. */
export function usageCap(grants: Grant[]): string | null {
  if (grants.length === 0 || grants.some((g) => g.is_soft_limit || g.usage_limit == null)) return null
  return grants.reduce((sum, g) => sum.plus(g.usage_limit!), D(0)).toString()
}

/** Pure: the quantity priced for a measured usage under a cap. */
export function cappedQuantity(measured: string, cap: string | null): string {
  return cap !== null && D(measured).gt(cap) ? cap : measured
}

/** The caps of the subscription's metered features, by meter id, at `at`. */
export async function usageCapsByMeter(em: EntityManager, sub: Subscription, meterIds: string[], at: Date): Promise<Map<string, string | null>> {
  if (meterIds.length === 0) return new Map()
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const caps = await usageCapsOf(em, scope, [sub], meterIds, at)
  return caps(sub, meterIds)
}

/**
 * usageCapsByMeter for several subscriptions of one scope at one instant, in at most three
 * statements: returns the caps of one of them for some of `meterIds`.
 */
export async function usageCapsOf(
  em: EntityManager, scope: Scope, subs: Subscription[], meterIds: string[], at: Date,
): Promise<(sub: Subscription, meterIds: string[]) => Map<string, string | null>> {
  const features = meterIds.length ? await plainFind(em, FeatureSchema, { ...scope, meter_id: { $in: meterIds }, status: 'published' }) : []
  if (features.length === 0) return () => new Map()
  const addons = (await plainFind(em, AddonAssociationSchema, { ...scope, subscription_id: { $in: subs.map((s) => s.id) }, addon_status: 'active', start_date: { $lte: at } }))
    .filter((a) => !a.end_date || a.end_date > at)
  const grantors = [
    ...[...new Set(subs.map((s) => s.plan_id))].map((id) => ({ entity_type: 'PLAN' as const, entity_id: id })),
    ...[...new Set(addons.map((a) => a.addon_id))].map((id) => ({ entity_type: 'ADDON' as const, entity_id: id })),
  ]
  const grants = await plainFind(em, EntitlementSchema, {
    ...scope, status: 'published', is_enabled: true, feature_id: { $in: features.map((f) => f.id) }, $or: grantors,
    $and: [{ $or: [{ start_date: null }, { start_date: { $lte: at } }] }, { $or: [{ end_date: null }, { end_date: { $gt: at } }] }],
  })
  return (sub, ids) => {
    const caps = new Map<string, string | null>()
    const wanted = new Set(ids)
    const own = new Set([`PLAN:${sub.plan_id}`, ...addons.filter((a) => a.subscription_id === sub.id).map((a) => `ADDON:${a.addon_id}`)])
    for (const f of features) {
      if (!wanted.has(f.meter_id!)) continue
      caps.set(f.meter_id!, usageCap(grants.filter((g) => g.feature_id === f.id && own.has(`${g.entity_type}:${g.entity_id}`))))
    }
    return caps
  }
}
