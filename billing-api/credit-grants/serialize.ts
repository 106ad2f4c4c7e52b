import { iso, serializeBase } from '../db/common.js'
import type { CreditGrant } from './credit-grant.entity.js'

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
