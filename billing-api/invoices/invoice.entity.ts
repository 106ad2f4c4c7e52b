import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, integer, json, text, timestamp, type BaseRecord } from '../db/common.js'
import type { CommitmentInfo } from '../pricing/commitment.js'

export type InvoiceStatus = 'DRAFT' | 'FINALIZED' | 'VOIDED' | 'SKIPPED'
export type PaymentStatus =
  | 'INITIATED' | 'PENDING' | 'PROCESSING' | 'SUCCEEDED' | 'OVERPAID' | 'FAILED' | 'REFUNDED' | 'PARTIALLY_REFUNDED'

export const INVOICE_AMOUNT_FIELDS = [
  'subtotal', 'total_discount', 'total_tax', 'total_prepaid_credits_applied', 'adjustment_amount', 'total',
  'amount_due', 'amount_paid', 'amount_remaining', 'overpaid_amount', 'refunded_amount',
] as const
type AmountField = (typeof INVOICE_AMOUNT_FIELDS)[number]

export type Invoice = BaseRecord & Record<AmountField, string> & {
  customer_id: string
  subscription_id: string | null
  /** the subscription's own customer (subscriptions_0003_hierarchy); differs from customer_id under delegated invoicing */
  subscription_customer_id: string | null
  invoice_type: 'SUBSCRIPTION' | 'ONE_OFF' | 'CREDIT'
  invoice_status: InvoiceStatus
  payment_status: PaymentStatus
  currency: string
  billing_reason: string
  billing_period: string | null
  period_start: Date | null
  period_end: Date | null
  invoice_number: string | null
  billing_sequence: number | null
  idempotency_key: string
  description: string | null
  issue_date: Date | null
  due_date: Date | null
  finalized_at: Date | null
  paid_at: Date | null
  voided_at: Date | null
  last_computed_at: Date | null
  version: number
}

export const InvoiceSchema = new EntitySchema<Invoice>({
  name: 'Invoice',
  tableName: 'invoices',
  properties: {
    ...baseColumns<Invoice>(),
    ...(Object.fromEntries(INVOICE_AMOUNT_FIELDS.map((f) => [f, decimal()])) as Record<(typeof INVOICE_AMOUNT_FIELDS)[number], ReturnType<typeof decimal>>),
    customer_id: text(),
    subscription_id: text(true),
    subscription_customer_id: text(true),
    invoice_type: text(),
    invoice_status: text(),
    payment_status: text(),
    currency: text(),
    billing_reason: text(),
    billing_period: text(true),
    period_start: timestamp(true),
    period_end: timestamp(true),
    invoice_number: text(true),
    billing_sequence: integer(true),
    idempotency_key: text(),
    description: text(true),
    issue_date: timestamp(true),
    due_date: timestamp(true),
    finalized_at: timestamp(true),
    paid_at: timestamp(true),
    voided_at: timestamp(true),
    last_computed_at: timestamp(true),
    version: { ...integer(), version: true },
  },
})

/** usage_analytics of a usage line: its usage per event source (invoices/usage-analytics.ts). */
export interface UsageAnalyticsItem {
  source: string
  usage: string
  cost: string
  percentage: string
  event_count: number
}

/** usage_breakdown of a usage line: its usage per value of the meter's group_by. */
export interface UsageBreakdownItem {
  grouped_by: Record<string, string>
  usage: string
  cost: string
  percentage: string
  event_count: number
}

export interface InvoiceLineItem extends BaseRecord {
  invoice_id: string
  customer_id: string
  subscription_id: string | null
  subscription_line_item_id: string | null
  price_id: string | null
  price_type: string | null
  meter_id: string | null
  currency: string
  display_name: string | null
  amount: string
  quantity: string
  /** usage lines: the quantity priced after entitlement hard limits (entitlement-limits.ts); null otherwise */
  adjusted_entitlement_quantity?: string | null
  /** coupons (migrations/0003_amounts.sql): set at draft computation */
  line_item_discount: string
  invoice_level_discount: string
  /** the line's share of the invoice's prepaid credits, set at finalization */
  prepaid_credits_applied: string
  /** commitment applied to this line (migrations/0020_commitment_info.sql); null without one */
  commitment_info?: CommitmentInfo | null
  /** usage lines: per event source / per meter group_by value (migrations/0010_usage_analytics.sql, usage-analytics.ts) */
  usage_analytics?: UsageAnalyticsItem[] | null
  usage_breakdown?: UsageBreakdownItem[] | null
  period_start: Date | null
  period_end: Date | null
}

export const InvoiceLineItemSchema = new EntitySchema<InvoiceLineItem>({
  name: 'InvoiceLineItem',
  tableName: 'invoice_line_items',
  properties: {
    ...baseColumns<InvoiceLineItem>(),
    invoice_id: text(),
    customer_id: text(),
    subscription_id: text(true),
    subscription_line_item_id: text(true),
    price_id: text(true),
    price_type: text(true),
    meter_id: text(true),
    currency: text(),
    display_name: text(true),
    amount: decimal(),
    quantity: decimal(),
    adjusted_entitlement_quantity: decimal(true),
    // Rows written elsewhere (proration, manual lines) without these get 0.
    line_item_discount: { ...decimal(), onCreate: (l: InvoiceLineItem) => l.line_item_discount ?? '0' },
    invoice_level_discount: { ...decimal(), onCreate: (l: InvoiceLineItem) => l.invoice_level_discount ?? '0' },
    prepaid_credits_applied: { ...decimal(), onCreate: (l: InvoiceLineItem) => l.prepaid_credits_applied ?? '0' },
    commitment_info: json(true),
    usage_analytics: json(true),
    usage_breakdown: json(true),
    period_start: timestamp(true),
    period_end: timestamp(true),
  },
})
