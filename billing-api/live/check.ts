// The entitlement check from memory: the customer's holdings and the scope's features, meters
// and entitlements from the live catalog, the usage of the current reset period from the live
// counters. No Postgres or ClickHouse round trip once both are warm.
import { ValidationError, NotFoundError } from '../../platform/errors.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { grantsOf } from '../entitlements/index.js'
import type { UsageResetPeriod } from '../entitlements/entitlement.entity.js'
import type { Feature } from '../features/feature.entity.js'
import { toReportingUnit, type ReportedUsage } from '../features/index.js'
import { meterValue } from '../meters/index.js'
import { allowance, combineGrants } from '../entitlements/index.js'
import type { CustomerHoldings, ScopeCatalog } from './catalog.js'
import type { LiveAggregation } from './counters.js'
import type { LiveAccess } from './live-access.js'
import { liveUsagePeriod } from './usage-periods.js'

export interface CustomerRef {
  external_customer_id?: string
  customer_id?: string
}

export interface FeatureRef {
  feature_id?: string
  feature_lookup_key?: string
}

export interface EntitlementCheck {
  customer_id: string
  external_customer_id: string
  feature_id: string
  feature_lookup_key: string
  feature_type: Feature['type']
  is_enabled: boolean
  has_access: boolean
  static_value: string | null
  usage_limit: string | null
  is_soft_limit: boolean
  usage_reset_period: UsageResetPeriod | null
  period_start: string | null
  period_end: string | null
  usage: string | null
  remaining: string | null
  reported_usage: ReportedUsage | null
  /** every event acknowledged before this instant is in `usage`; null: not metered, or unknown */
  usage_as_of: string | null
  entitlement_ids: string[]
  checked_at: string
}

export function customerRefOf(req: CustomerRef): CustomerRef {
  if ((req.customer_id === undefined) === (req.external_customer_id === undefined)) {
    throw new ValidationError('give exactly one of customer_id and external_customer_id', 'external_customer_id')
  }
  return req
}

function featureOf(cat: ScopeCatalog, req: FeatureRef, field = 'feature_id'): Feature {
  if ((req.feature_id === undefined) === (req.feature_lookup_key === undefined)) {
    throw new ValidationError('give exactly one of feature_id and feature_lookup_key', field)
  }
  const f = req.feature_id !== undefined ? cat.features.get(req.feature_id) : cat.featureByKey.get(req.feature_lookup_key!)
  if (!f) throw new NotFoundError('feature', req.feature_id ?? req.feature_lookup_key!)
  return f
}

/** One feature's check for a customer whose holdings and catalog are at hand. */
export async function checkFeature(live: LiveAccess, scope: Scope, h: CustomerHoldings, cat: ScopeCatalog, feature: Feature, at: Date): Promise<EntitlementCheck> {
  const grants = grantsOf(h.subscriptions, h.addons, cat.entitlementsByFeature.get(feature.id) ?? [], at)
  const combined = combineGrants(grants.map((g) => g.entitlement))
  const meter = feature.meter_id ? cat.meters.get(feature.meter_id) : undefined
  const period = combined.is_enabled && meter ? liveUsagePeriod(grants, at) : null
  let measured: { usage: string; asOf: number | null } | null = null
  if (period && meter) {
    const v = await live.counters.get({
      tenantId: scope.tenant_id, environmentId: scope.environment_id, meterId: meter.id, aggregation: meter.aggregation.type as LiveAggregation,
      externalCustomerId: h.customer.external_id, start: period.start, end: period.end,
    })
    measured = { usage: meterValue(meter, v.value, v.event_count), asOf: v.asOf }
  }
  const { remaining, has_access } = measured ? allowance(combined, measured.usage) : allowance({ ...combined, usage_limit: null }, '0')
  // A depleted prepaid wallet (spend cap) closes metered features until it is topped up.
  const depleted = meter !== undefined && live.caps.isDepleted(scope, h.customer.id)
  return {
    customer_id: h.customer.id,
    external_customer_id: h.customer.external_id,
    feature_id: feature.id,
    feature_lookup_key: feature.lookup_key,
    feature_type: feature.type,
    is_enabled: combined.is_enabled,
    has_access: has_access && !depleted,
    static_value: combined.static_value,
    usage_limit: combined.usage_limit,
    is_soft_limit: combined.is_soft_limit,
    usage_reset_period: period?.reset ?? null,
    period_start: period ? period.start.toISOString() : null,
    period_end: period?.end ? period.end.toISOString() : null,
    usage: measured?.usage ?? null,
    remaining: measured ? remaining : null,
    reported_usage: measured ? toReportingUnit(measured.usage, feature.reporting_unit) : null,
    usage_as_of: measured?.asOf != null ? new Date(measured.asOf).toISOString() : null,
    entitlement_ids: [...new Set(grants.map((g) => g.entitlement.id))],
    checked_at: at.toISOString(),
  }
}

export async function checkEntitlement(ctx: BillingContext, live: LiveAccess, scope: Scope, req: CustomerRef & FeatureRef): Promise<EntitlementCheck> {
  const at = ctx.clock.now()
  const h = await live.catalog.holdings(scope, customerRefOf(req))
  const cat = await live.catalog.scope(scope)
  return checkFeature(live, scope, h, cat, featureOf(cat, req), at)
}

/** Many features of one customer in one call, in the order asked; one unknown feature fails the call (404). */
export async function checkEntitlements(ctx: BillingContext, live: LiveAccess, scope: Scope, req: CustomerRef & { features: FeatureRef[] }): Promise<{ checks: EntitlementCheck[] }> {
  const at = ctx.clock.now()
  const h = await live.catalog.holdings(scope, customerRefOf(req))
  const cat = await live.catalog.scope(scope)
  const features = req.features.map((f, i) => featureOf(cat, f, `features[${i}]`))
  return { checks: await Promise.all(features.map((f) => checkFeature(live, scope, h, cat, f, at))) }
}
