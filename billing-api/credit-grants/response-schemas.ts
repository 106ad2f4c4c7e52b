// Response schemas of the credit grant routes (registered by module.ts, referred to by $id).
import { alwaysNull, str, stringOrNull, integer, integerOrNull, dateTimeString, dateTimeOrNull, recordSchema } from '../http/response-schemas.js'

export const creditGrantSchema = recordSchema('CreditGrant', {
  name: str,
  plan_id: stringOrNull,
  subscription_id: stringOrNull,
  credits: str,
  conversion_rate: stringOrNull,
  topup_conversion_rate: stringOrNull,
  credit_grant_anchor: dateTimeOrNull,
  start_date: dateTimeOrNull,
  end_date: dateTimeOrNull,
  expiration_duration: integerOrNull,
  expiration_duration_unit: stringOrNull,
  period: str,
  period_count: integer,
  priority: integer,
  /** ONETIME when period is ONETIME, else RECURRING */
  cadence: str,
  /** PLAN or SUBSCRIPTION: which of plan_id and subscription_id is set */
  scope: str,
  /** expiry is expiration_duration and its unit: null for clients that require the key */
  expiration_type: alwaysNull,
})

/** Projected applications (not yet scheduled) have no id and no timestamps yet. */
const projected = { type: ['string', 'null'], format: 'date-time', description: 'null for an application projected but not yet scheduled' } as const

export const creditGrantApplicationSchema = recordSchema('CreditGrantApplication', {
  id: { type: ['string', 'null'], description: 'null for an application projected but not yet scheduled' },
  created_at: projected,
  updated_at: projected,
  credit_grant_id: str,
  subscription_id: str,
  credits: str,
  scheduled_for: dateTimeString,
  applied_at: dateTimeOrNull,
  period_start: dateTimeString,
  period_end: dateTimeOrNull,
  application_status: str,
  failure_reason: stringOrNull,
  retry_count: integer,
  idempotency_key: str,
  // why and in which subscription state it was applied are not recorded: null for clients that require the keys
  application_reason: alwaysNull,
  subscription_status_at_application: alwaysNull,
})
