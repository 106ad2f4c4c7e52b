// Records that make up an invoice's amounts besides its lines: the coupon applications written
// at draft computation and the taxes applied at finalization (migrations/0003_amounts.sql).
import { EntitySchema } from '@mikro-orm/core'
import { baseColumns, decimal, json, text, timestamp, type BaseRecord } from '../db/common.js'

export interface CouponApplication extends BaseRecord {
  invoice_id: string
  /** null for an invoice-level coupon */
  invoice_line_item_id: string | null
  subscription_id: string | null
  coupon_id: string
  coupon_association_id: string | null
  currency: string
  applied_at: Date
  coupon_snapshot: Record<string, unknown>
  /** percentage coupons only */
  discount_percentage: string | null
  discounted_amount: string
  original_price: string
  final_price: string
}

export const CouponApplicationSchema = new EntitySchema<CouponApplication>({
  name: 'CouponApplication',
  tableName: 'coupon_applications',
  properties: {
    ...baseColumns<CouponApplication>(),
    invoice_id: text(),
    invoice_line_item_id: text(true),
    subscription_id: text(true),
    coupon_id: text(),
    coupon_association_id: text(true),
    currency: text(),
    applied_at: timestamp(),
    coupon_snapshot: json(),
    discount_percentage: decimal(true),
    discounted_amount: decimal(),
    original_price: decimal(),
    final_price: decimal(),
  },
})

export interface AppliedTax extends BaseRecord {
  entity_type: 'invoice'
  /** the invoice's id */
  entity_id: string
  tax_rate_id: string
  tax_association_id: string
  currency: string
  /** `<invoice id>:<tax association id>`, unique per environment */
  idempotency_key: string
  taxable_amount: string
  tax_amount: string
  applied_at: Date
}

export const AppliedTaxSchema = new EntitySchema<AppliedTax>({
  name: 'AppliedTax',
  tableName: 'applied_taxes',
  properties: {
    ...baseColumns<AppliedTax>(),
    entity_type: text(),
    entity_id: text(),
    tax_rate_id: text(),
    tax_association_id: text(),
    currency: text(),
    idempotency_key: text(),
    taxable_amount: decimal(),
    tax_amount: decimal(),
    applied_at: timestamp(),
  },
})
