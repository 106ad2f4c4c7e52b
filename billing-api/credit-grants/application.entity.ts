import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, integer, text, timestamp, type BaseRecord } from '../db/common.js'

export const APPLICATION_STATUSES = ['PENDING', 'APPLIED', 'FAILED', 'SKIPPED'] as const
export type ApplicationStatus = (typeof APPLICATION_STATUSES)[number]

/** One grant's credits for one subscription and one grant period (spec: Credit grant application). */
export interface CreditGrantApplication extends BaseRecord {
  credit_grant_id: string
  subscription_id: string
  credits: string
  scheduled_for: Date
  applied_at: Date | null
  period_start: Date
  /** null for a ONETIME grant, whose single period has no end */
  period_end: Date | null
  application_status: ApplicationStatus
  failure_reason: string | null
  retry_count: number
  idempotency_key: string
}

export const CreditGrantApplicationSchema = new EntitySchema<CreditGrantApplication>({
  name: 'CreditGrantApplication',
  tableName: 'credit_grant_applications',
  properties: {
    ...baseColumns<CreditGrantApplication>(),
    credit_grant_id: text(),
    subscription_id: text(),
    credits: decimal(),
    scheduled_for: timestamp(),
    applied_at: timestamp(true),
    period_start: timestamp(),
    period_end: timestamp(true),
    application_status: text(),
    failure_reason: text(true),
    retry_count: integer(),
    idempotency_key: text(),
  },
})
