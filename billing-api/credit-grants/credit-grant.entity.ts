import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, integer, text, timestamp, type BaseRecord } from '../db/common.js'

export const CREDIT_GRANT_PERIODS = ['BILLING_PERIOD', 'MONTHLY', 'ANNUAL', 'ONETIME'] as const
export const EXPIRATION_DURATION_UNITS = ['DAY', 'WEEK', 'MONTH', 'YEAR'] as const

export interface CreditGrant extends BaseRecord {
  name: string
  /** exactly one of plan_id and subscription_id is set */
  plan_id: string | null
  subscription_id: string | null
  credits: string
  conversion_rate: string | null
  topup_conversion_rate: string | null
  credit_grant_anchor: Date | null
  start_date: Date | null
  end_date: Date | null
  expiration_duration: number | null
  expiration_duration_unit: (typeof EXPIRATION_DURATION_UNITS)[number] | null
  period: (typeof CREDIT_GRANT_PERIODS)[number]
  period_count: number
  priority: number
}

export const CreditGrantSchema = new EntitySchema<CreditGrant>({
  name: 'CreditGrant',
  tableName: 'credit_grants',
  properties: {
    ...baseColumns<CreditGrant>(),
    name: text(),
    plan_id: text(true),
    subscription_id: text(true),
    credits: decimal(),
    conversion_rate: decimal(true),
    topup_conversion_rate: decimal(true),
    credit_grant_anchor: timestamp(true),
    start_date: timestamp(true),
    end_date: timestamp(true),
    expiration_duration: integer(true),
    expiration_duration_unit: text(true),
    period: text(),
    period_count: integer(),
    priority: integer(),
  },
})
