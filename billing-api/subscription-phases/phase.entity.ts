import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, iso, json, serializeBase, text, timestamp, type BaseRecord } from '../db/common.js'

export interface PhaseLineItem {
  price_id: string
  quantity: string
}

/** Spec: SubscriptionPhase (id, subscription_id, start_date, end_date, metadata); line_items, coupon_ids and applied_at are ours. */
export interface SubscriptionPhase extends BaseRecord {
  subscription_id: string
  start_date: Date
  end_date: Date | null
  line_items: PhaseLineItem[]
  coupon_ids: string[]
  applied_at: Date | null
}

export const SubscriptionPhaseSchema = new EntitySchema<SubscriptionPhase>({
  name: 'SubscriptionPhase',
  tableName: 'subscription_phases',
  properties: {
    ...baseColumns<SubscriptionPhase>(),
    subscription_id: text(),
    start_date: timestamp(),
    end_date: timestamp(true),
    line_items: json(),
    coupon_ids: json(),
    applied_at: timestamp(true),
  },
})

/** The wire form, here beside the record because the subscription read shows phases too. */
export function serializePhase(p: SubscriptionPhase) {
  return {
    ...serializeBase(p),
    subscription_id: p.subscription_id,
    start_date: iso(p.start_date),
    end_date: iso(p.end_date),
    line_items: p.line_items,
    coupon_ids: p.coupon_ids,
    applied_at: iso(p.applied_at),
  }
}
