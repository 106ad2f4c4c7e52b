import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, bool, decimal, integer, json, text, timestamp, type BaseRecord } from '../db/common.js'
import type { BillingPeriod } from '../periods/periods.js'

export type SubscriptionStatus = 'DRAFT' | 'TRIALING' | 'ACTIVE' | 'INCOMPLETE' | 'CANCELLED'
export const SUBSCRIPTION_STATUSES: SubscriptionStatus[] = ['DRAFT', 'TRIALING', 'ACTIVE', 'INCOMPLETE', 'CANCELLED']
export const SUBSCRIPTION_TYPES = ['STANDALONE', 'PARENT', 'INHERITED', 'DELEGATED_INVOICING'] as const
export type SubscriptionType = (typeof SUBSCRIPTION_TYPES)[number]
/** send_invoice is the spec's "manual" collection; charge_automatically its "automatic". */
export const COLLECTION_METHODS = ['charge_automatically', 'send_invoice'] as const
export type CollectionMethod = (typeof COLLECTION_METHODS)[number]
// minimum_period_end / maximum_period_end: multi-cadence strategies (cancel-strategies.ts)
export const CANCELLATION_TYPES = ['immediate', 'scheduled_date', 'end_of_period', 'minimum_period_end', 'maximum_period_end'] as const
export type CancellationType = (typeof CANCELLATION_TYPES)[number]

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
  subscription_type: SubscriptionType
  parent_subscription_id: string | null
  invoicing_customer_id: string | null
  trial_start: Date | null
  trial_end: Date | null
  collection_method: CollectionMethod
  payment_behavior: string
  auto_invoice_threshold: string | null
  commitment_amount: string | null
  overage_factor: string | null
  enable_true_up: boolean
  /** the plan's max_price_sequence this subscription's line items reflect */
  synced_price_sequence: number
  cancellation_type: CancellationType | null
  lookup_key: string | null
}

export const SubscriptionSchema = new EntitySchema<Subscription>({
  name: 'Subscription',
  tableName: 'subscriptions',
  properties: {
    ...baseColumns<Subscription>(),
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
    subscription_type: text(),
    parent_subscription_id: text(true),
    invoicing_customer_id: text(true),
    trial_start: timestamp(true),
    trial_end: timestamp(true),
    collection_method: text(),
    payment_behavior: text(),
    auto_invoice_threshold: decimal(true),
    commitment_amount: decimal(true),
    overage_factor: decimal(true),
    enable_true_up: bool(),
    synced_price_sequence: integer(),
    cancellation_type: text(true),
    lookup_key: text(true),
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
  /** set on the line items of an attached add-on (addon-attach.ts) */
  addon_association_id?: string | null
  /** set on the line items a subscription phase started (subscription-phases/phase-switch.ts) */
  subscription_phase_id?: string | null
  // commitments (migrations/0004_commitments.sql, commitments.ts)
  commitment_amount?: string | null
  commitment_quantity?: string | null
  commitment_overage_factor?: string | null
  commitment_true_up_enabled?: boolean
  commitment_windowed?: boolean
  /** line-level price override; holds commitment_time_buckets */
  price_override?: LineItemPriceOverride | null
}

export interface LineItemPriceOverride {
  commitment_time_buckets?: { start: { hour: number; minute: number }; end: { hour: number; minute: number } }[]
}

export const SubscriptionLineItemSchema = new EntitySchema<SubscriptionLineItem>({
  name: 'SubscriptionLineItem',
  tableName: 'subscription_line_items',
  properties: {
    ...baseColumns<SubscriptionLineItem>(),
    subscription_id: text(),
    customer_id: text(),
    price_id: text(),
    meter_id: text(true),
    currency: text(),
    display_name: text(true),
    quantity: decimal(),
    start_date: timestamp(),
    end_date: timestamp(true),
    addon_association_id: text(true),
    subscription_phase_id: text(true),
    commitment_amount: decimal(true),
    commitment_quantity: decimal(true),
    commitment_overage_factor: decimal(true),
    commitment_true_up_enabled: { ...bool(), default: false },
    commitment_windowed: { ...bool(), default: false },
    price_override: json(true),
  },
})
