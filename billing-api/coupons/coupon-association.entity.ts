import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, text, timestamp, type BaseRecord } from '../db/common.js'

/** A coupon attached to a subscription (spec: CouponAssociation); see migrations/0002_associations.sql. */
export interface CouponAssociation extends BaseRecord {
  coupon_id: string
  subscription_id: string
  /** set: the coupon discounts this line only; null: the whole invoice */
  subscription_line_item_id: string | null
  subscription_phase_id: string | null
  start_date: Date
  end_date: Date | null
  /** when the association counted its redemption; the redemption window is checked at this instant */
  redeemed_at: Date
}

export const CouponAssociationSchema = new EntitySchema<CouponAssociation>({
  name: 'CouponAssociation',
  tableName: 'coupon_associations',
  properties: {
    ...baseColumns<CouponAssociation>(),
    coupon_id: text(),
    subscription_id: text(),
    subscription_line_item_id: text(true),
    subscription_phase_id: text(true),
    start_date: timestamp(),
    end_date: timestamp(true),
    redeemed_at: timestamp(),
  },
})
