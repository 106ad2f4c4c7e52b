import { EntitySchema } from '@mikro-orm/core'
import { baseProperties, bool, decimal, integer, text, timestamp, type BaseRecord } from '../db/common.js'
import type { BillingPeriod } from '../plans/price.entity.js'

export type SubscriptionStatus = 'DRAFT' | 'TRIALING' | 'ACTIVE' | 'INCOMPLETE' | 'CANCELLED'

export interface Subscription extends BaseRecord {
  customer_id: string
  plan_id: string
  currency: string
  subscription_status: SubscriptionStatus
  billing_period: BillingPeriod
  billing_period_count: number
  billing_cycle: 'anniversary' | 'calendar'
  billing_anchor: Date
  start_date: Date
  end_date: Date | null
  current_period_start: Date
  current_period_end: Date
  cancel_at: Date | null
  cancelled_at: Date | null
  cancel_at_period_end: boolean
  version: number
}

export const SubscriptionSchema = new EntitySchema<Subscription>({
  name: 'Subscription',
  tableName: 'subscriptions',
  properties: {
    ...(baseProperties as any),
    customer_id: text(),
    plan_id: text(),
    currency: text(),
    subscription_status: text(),
    billing_period: text(),
    billing_period_count: integer(),
    billing_cycle: text(),
    billing_anchor: timestamp(),
    start_date: timestamp(),
    end_date: timestamp(true),
    current_period_start: timestamp(),
    current_period_end: timestamp(),
    cancel_at: timestamp(true),
    cancelled_at: timestamp(true),
    cancel_at_period_end: bool(),
    version: { ...integer(), version: true },
  },
})

export interface SubscriptionLineItem extends BaseRecord {
  subscription_id: string
  customer_id: string
  price_id: string
  meter_id: string | null
  currency: string
  display_name: string | null
  quantity: string
  start_date: Date
  end_date: Date | null
}

export const SubscriptionLineItemSchema = new EntitySchema<SubscriptionLineItem>({
  name: 'SubscriptionLineItem',
  tableName: 'subscription_line_items',
  properties: {
    ...(baseProperties as any),
    subscription_id: text(),
    customer_id: text(),
    price_id: text(),
    meter_id: text(true),
    currency: text(),
    display_name: text(true),
    quantity: decimal(),
    start_date: timestamp(),
    end_date: timestamp(true),
  },
})
