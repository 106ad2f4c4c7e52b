import { iso, serializeBase, pick } from '../db/common.js'
import type { CreditGrant } from './credit-grant.entity.js'
import type { UpcomingApplication } from './upcoming.js'
import { grantCadence, grantScope } from './cadence-scope.js'

export function serializeCreditGrant(g: CreditGrant) {
  return {
    ...serializeBase(g),
    ...pick(g, ['name', 'plan_id', 'subscription_id', 'credits', 'conversion_rate', 'topup_conversion_rate']),
    credit_grant_anchor: iso(g.credit_grant_anchor),
    start_date: iso(g.start_date),
    end_date: iso(g.end_date),
    ...pick(g, ['expiration_duration', 'expiration_duration_unit', 'period', 'period_count', 'priority']),
    cadence: grantCadence(g),
    scope: grantScope(g),
    expiration_type: null,
  }
}

/** Credits travel as a decimal string (the spec's table says number; money never goes through floats here). */
export function serializeApplication(a: UpcomingApplication) {
  return {
    ...pick(a, ['id', 'tenant_id', 'environment_id', 'credit_grant_id', 'subscription_id', 'credits']),
    scheduled_for: a.scheduled_for.toISOString(),
    applied_at: iso(a.applied_at),
    period_start: a.period_start.toISOString(),
    period_end: iso(a.period_end),
    ...pick(a, ['application_status', 'failure_reason', 'retry_count', 'idempotency_key', 'status']),
    application_reason: null,
    subscription_status_at_application: null,
    metadata: a.metadata ?? {},
    created_at: iso(a.created_at),
    updated_at: iso(a.updated_at),
    created_by: a.created_by ?? null,
    updated_by: a.updated_by ?? null,
  }
}
