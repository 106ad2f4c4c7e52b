import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, integer, json, text, timestamp, type BaseRecord } from '../db/common.js'

export const COUPON_TYPES = ['fixed', 'percentage'] as const
export type CouponType = (typeof COUPON_TYPES)[number]

export const COUPON_DURATIONS = ['once', 'repeating', 'forever'] as const
export type CouponDuration = (typeof COUPON_DURATIONS)[number]

/** Deleting a coupon archives it: it stays readable for the invoices that carry it. */
export const COUPON_STATUSES = ['published', 'archived'] as const

export interface Coupon extends BaseRecord {
  name: string
  type: CouponType
  /** decimal string at the currency's precision; fixed coupons only */
  amount_off: string | null
  /** decimal string, 0 < p <= 100; percentage coupons only */
  percentage_off: string | null
  /** fixed coupons only: a percentage applies to any currency */
  currency: string | null
  duration: CouponDuration
  duration_in_periods: number | null
  max_redemptions: number | null
  total_redemptions: number
  redeem_after: Date | null
  redeem_before: Date | null
  rules: Record<string, unknown>
}

export const CouponSchema = new EntitySchema<Coupon>({
  name: 'Coupon',
  tableName: 'coupons',
  properties: {
    ...baseColumns<Coupon>(),
    name: text(),
    type: text(),
    amount_off: decimal(true),
    percentage_off: decimal(true),
    currency: text(true),
    duration: text(),
    duration_in_periods: integer(true),
    max_redemptions: integer(true),
    total_redemptions: integer(),
    redeem_after: timestamp(true),
    redeem_before: timestamp(true),
    rules: json(),
  },
})
