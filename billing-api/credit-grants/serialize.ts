import { iso, serializeBase } from '../db/common.js'
import type { CreditGrant } from './credit-grant.entity.js'
import type { UpcomingApplication } from './upcoming.js'

export function serializeCreditGrant(g: CreditGrant) {
  return {
    ...serializeBase(g),
    name: g.name,
    plan_id: g.plan_id,
    subscription_id: g.subscription_id,
    credits: g.credits,
    conversion_rate: g.conversion_rate,
    topup_conversion_rate: g.topup_conversion_rate,
    credit_grant_anchor: iso(g.credit_grant_anchor),
    start_date: iso(g.start_date),
    end_date: iso(g.end_date),
    expiration_duration: g.expiration_duration,
    expiration_duration_unit: g.expiration_duration_unit,
    period: g.period,
    period_count: g.period_count,
    priority: g.priority,
  }
}

/** Credits travel as a decimal string (the spec's table says number; money never goes through floats here). */
export function serializeApplication(a: UpcomingApplication) {
  return {
    id: a.id,
    tenant_id: a.tenant_id,
    environment_id: a.environment_id,
    credit_grant_id: a.credit_grant_id,
    subscription_id: a.subscription_id,
    credits: a.credits,
    scheduled_for: a.scheduled_for.toISOString(),
    applied_at: iso(a.applied_at),
    period_start: a.period_start.toISOString(),
    period_end: iso(a.period_end),
    application_status: a.application_status,
    failure_reason: a.failure_reason,
    retry_count: a.retry_count,
    idempotency_key: a.idempotency_key,
    status: a.status,
    metadata: a.metadata ?? {},
    created_at: iso(a.created_at),
    updated_at: iso(a.updated_at),
    created_by: a.created_by ?? null,
    updated_by: a.updated_by ?? null,
  }
}
