import { BigIntType, EntitySchema } from '@mikro-orm/core'
import { baseColumns, bool, integer, text, timestamp, type BaseRecord } from '../db/common.js'

export const ENTITLEMENT_ENTITY_TYPES = ['PLAN', 'ADDON'] as const
export type EntitlementEntityType = (typeof ENTITLEMENT_ENTITY_TYPES)[number]

export const USAGE_RESET_PERIODS = ['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY', 'NEVER'] as const
export type UsageResetPeriod = (typeof USAGE_RESET_PERIODS)[number]

/** A feature granted by a plan or an add-on. */
export interface Entitlement extends BaseRecord {
  entity_type: EntitlementEntityType
  entity_id: string
  feature_id: string
  is_enabled: boolean
  /** metered features only; null means unlimited */
  usage_limit: number | null
  is_soft_limit: boolean
  /** static features only */
  static_value: string | null
  /**
   * Metered features only. The spec describes a usage reset period for entitlements (daily,
   * weekly, monthly and similar) without naming its field; usage_reset_period is our name for it.
   */
  usage_reset_period: UsageResetPeriod | null
  display_order: number
  start_date: Date | null
  end_date: Date | null
}

export const EntitlementSchema = new EntitySchema<Entitlement>({
  name: 'Entitlement',
  tableName: 'entitlements',
  properties: {
    ...baseColumns<Entitlement>(),
    entity_type: text(),
    entity_id: text(),
    feature_id: text(),
    is_enabled: bool(),
    usage_limit: { type: new BigIntType('number'), columnType: 'bigint', nullable: true },
    is_soft_limit: bool(),
    static_value: text(true),
    usage_reset_period: text(true),
    display_order: integer(),
    start_date: timestamp(true),
    end_date: timestamp(true),
  },
})
