// The entitlement check: may this customer use this feature now, and how much is left?
// Answered from the customer's live grants (customer-grants.ts, combined by access.ts) and,
// for a metered feature, the usage of its meter in the current usage reset period
// (usage-period.ts), read from the meter buckets like every other usage read.
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError, ValidationError } from '../../platform/errors.js'
import type { BillingContext } from '../context.js'
import { CustomerSchema, type Customer } from '../customers/customer.entity.js'
import type { Scope } from '../db/scope.js'
import { FeatureSchema, type Feature } from '../features/feature.entity.js'
import { toReportingUnit, type ReportedUsage } from '../features/index.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import { meterValue, usageReader } from '../meters/index.js'
import { allowance, combineGrants } from './access.js'
import { customerGrants, type CustomerGrant } from './customer-grants.js'
import type { UsageResetPeriod } from './entitlement.entity.js'
import { usagePeriodAt } from './usage-period.js'

export interface EntitlementCheckRequest {
  external_customer_id?: string
  customer_id?: string
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
  entitlement_ids: string[]
  checked_at: string
}

/** Where a read of "usage so far" ends when the period never resets. */
export const OPEN_END = new Date('2100-01-01T00:00:00Z')

async function findCustomer(em: EntityManager, scope: Scope, req: EntitlementCheckRequest): Promise<Customer> {
  if ((req.customer_id === undefined) === (req.external_customer_id === undefined)) {
    throw new ValidationError('give exactly one of customer_id and external_customer_id', 'external_customer_id')
  }
  const where = req.customer_id !== undefined ? { id: req.customer_id } : { external_id: req.external_customer_id }
  const customer = await em.findOne(CustomerSchema, { ...scope, ...where, status: { $ne: 'deleted' } })
  if (!customer) throw new NotFoundError('customer', req.customer_id ?? req.external_customer_id!)
  return customer
}

async function findFeature(em: EntityManager, scope: Scope, req: EntitlementCheckRequest): Promise<Feature> {
  if ((req.feature_id === undefined) === (req.feature_lookup_key === undefined)) {
    throw new ValidationError('give exactly one of feature_id and feature_lookup_key', 'feature_id')
  }
  const where = req.feature_id !== undefined ? { id: req.feature_id } : { lookup_key: req.feature_lookup_key }
  const feature = await em.findOne(FeatureSchema, { ...scope, ...where, status: { $ne: 'deleted' } })
  if (!feature) throw new NotFoundError('feature', req.feature_id ?? req.feature_lookup_key!)
  return feature
}

/** The current usage reset period of a customer's grants: the first enabled grant's, on its subscription's anchor. */
export function currentUsagePeriod(grants: CustomerGrant[], at: Date): { reset: UsageResetPeriod; start: Date; end: Date | null } | null {
  const first = grants.find((g) => g.entitlement.is_enabled && g.entitlement.usage_reset_period !== null)
  if (!first) return null
  const reset = first.entitlement.usage_reset_period!
  return { reset, ...usagePeriodAt(reset, first.subscription, at) }
}

/** The usage of the feature's meter for the customer in the current reset period of `grants`. */
async function featureUsageInPeriod(
  ctx: BillingContext, meter: Meter, externalCustomerId: string, grants: CustomerGrant[], at: Date,
): Promise<{ reset: UsageResetPeriod; start: Date; end: Date | null; usage: string } | null> {
  const period = currentUsagePeriod(grants, at)
  if (!period) return null
  const [row] = await usageReader(ctx)({
    tenantId: meter.tenant_id, environmentId: meter.environment_id, meterId: meter.id, aggregation: meter.aggregation.type,
    declaredGroupBy: meter.aggregation.group_by, externalCustomerId, start: period.start, end: period.end ?? OPEN_END,
  })
  return { ...period, usage: meterValue(meter, row.value, row.event_count) }
}

export async function checkEntitlement(ctx: BillingContext, em: EntityManager, scope: Scope, req: EntitlementCheckRequest): Promise<EntitlementCheck> {
  const at = ctx.clock.now()
  // Both lookups at once; when both fail, the customer's error is the one reported.
  const [c, f] = await Promise.allSettled([findCustomer(em.fork(), scope, req), findFeature(em.fork(), scope, req)])
  if (c.status === 'rejected') throw c.reason
  if (f.status === 'rejected') throw f.reason
  const [customer, feature] = [c.value, f.value]
  // The meter is looked up beside the grants: one round trip less before the usage read.
  const [grants, meter] = await Promise.all([
    customerGrants(em, scope, customer.id, [feature.id], at),
    feature.meter_id ? em.fork().findOne(MeterSchema, { id: feature.meter_id, ...scope }) : null,
  ])
  const combined = combineGrants(grants.map((g) => g.entitlement))
  const measured = combined.is_enabled && meter ? await featureUsageInPeriod(ctx, meter, customer.external_id, grants, at) : null
  const { remaining, has_access } = measured ? allowance(combined, measured.usage) : allowance({ ...combined, usage_limit: null }, '0')
  return {
    customer_id: customer.id,
    external_customer_id: customer.external_id,
    feature_id: feature.id,
    feature_lookup_key: feature.lookup_key,
    feature_type: feature.type,
    is_enabled: combined.is_enabled,
    has_access,
    static_value: combined.static_value,
    usage_limit: combined.usage_limit,
    is_soft_limit: combined.is_soft_limit,
    usage_reset_period: measured?.reset ?? null,
    period_start: measured ? measured.start.toISOString() : null,
    period_end: measured?.end ? measured.end.toISOString() : null,
    usage: measured?.usage ?? null,
    remaining: measured ? remaining : null,
    reported_usage: measured ? toReportingUnit(measured.usage, feature.reporting_unit) : null,
    entitlement_ids: [...new Set(grants.map((g) => g.entitlement.id))],
    checked_at: at.toISOString(),
  }
}
