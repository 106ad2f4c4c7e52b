// Response schemas of the coupon routes (registered by module.ts, referred to by $id).
import { str, stringOrNull, integer, integerOrNull, dateTimeString, dateTimeOrNull, recordSchema } from '../http/response-schemas.js'

export const couponSchema = recordSchema('Coupon', {
  name: str,
  type: str,
  amount_off: stringOrNull,
  percentage_off: stringOrNull,
  currency: stringOrNull,
  duration: str,
  /** duration under Flexprice's name: once, repeated, forever */
  cadence: str,
  duration_in_periods: integerOrNull,
  max_redemptions: integerOrNull,
  total_redemptions: integer,
  redeem_after: dateTimeOrNull,
  redeem_before: dateTimeOrNull,
  rules: { type: 'object', additionalProperties: true /* TODO empty */ },
})

export const couponAssociationSchema = recordSchema('CouponAssociation', {
  coupon_id: str,
  subscription_id: str,
  subscription_line_item_id: stringOrNull,
  subscription_phase_id: stringOrNull,
  start_date: dateTimeString,
  end_date: dateTimeOrNull,
})
