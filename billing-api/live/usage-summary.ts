// A customer's current period at a glance: every feature it is granted (checked as the live
// check does) and the projected invoices of its subscriptions' current periods so far.
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { grantsOf } from '../entitlements/index.js'
import type { Decimal } from 'decimal.js'
import { D, toMoneyString } from '../pricing/index.js'
import { checkFeature, type EntitlementCheck } from './check.js'
import { projectInvoices, type ProjectedInvoice } from './balance.js'
import type { LiveAccess } from './live-access.js'

export interface UsageSummary {
  customer_id: string
  external_customer_id: string
  features: Pick<EntitlementCheck, 'feature_id' | 'feature_lookup_key' | 'feature_type' | 'is_enabled' | 'has_access' | 'usage_limit' | 'is_soft_limit' | 'usage' | 'remaining' | 'period_start' | 'period_end' | 'usage_reset_period'>[]
  invoices: ProjectedInvoice[]
  /** projected amounts per currency, summed over the invoices */
  projected_amounts: { currency: string; amount: string }[]
  usage_as_of: string | null
  as_of: string
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

export async function usageSummary(ctx: BillingContext, live: LiveAccess, scope: Scope, customerId: string): Promise<UsageSummary> {
  const at = ctx.clock.now()
  const h = await live.catalog.holdings(scope, { customer_id: customerId })
  const cat = await live.catalog.scope(scope)
  const granted = [...cat.features.values()]
    .filter((f) => grantsOf(h.subscriptions, h.addons, cat.entitlementsByFeature.get(f.id) ?? [], at).length > 0)
    .sort((a, b) => a.lookup_key.localeCompare(b.lookup_key))
  const [checks, projection] = await Promise.all([
    Promise.all(granted.map((f) => checkFeature(live, scope, h, cat, f, at))),
    projectInvoices(ctx, live.counters, ctx.orm.em.fork(), h, at),
  ])
  const amounts = new Map<string, Decimal>()
  for (const i of projection.invoices) amounts.set(i.currency, (amounts.get(i.currency) ?? D(0)).plus(i.amount))
  const asOfs = [projection.asOf, ...checks.filter((c) => c.usage !== null).map((c) => (c.usage_as_of ? Date.parse(c.usage_as_of) : null))]
  const asOf = asOfs.includes(null) ? null : Math.min(...(asOfs as number[]))
  return {
    customer_id: h.customer.id,
    external_customer_id: h.customer.external_id,
    features: checks.map((c) => ({
      feature_id: c.feature_id, feature_lookup_key: c.feature_lookup_key, feature_type: c.feature_type, is_enabled: c.is_enabled,
      has_access: c.has_access, usage_limit: c.usage_limit, is_soft_limit: c.is_soft_limit, usage: c.usage, remaining: c.remaining,
      period_start: c.period_start, period_end: c.period_end, usage_reset_period: c.usage_reset_period,
    })),
    invoices: projection.invoices,
    projected_amounts: [...amounts].map(([currency, amount]) => ({ currency, amount: toMoneyString(amount, currency) })),
    usage_as_of: iso(asOf),
    as_of: at.toISOString(),
  }
}
