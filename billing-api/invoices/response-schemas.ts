// Response schemas of the invoice routes (registered by module.ts, referred to by $id).
import { anyJson, dateTimeOrNull, dateTimeString, integer, integerOrNull, objectOf, recordBaseProperties, recordSchema, ref, str, stringOrNull } from '../http/response-schemas.js'

const invoiceProperties = {
  customer_id: str,
  subscription_id: stringOrNull,
  subscription_customer_id: stringOrNull,
  invoice_type: str,
  invoice_status: str,
  payment_status: str,
  currency: str,
  billing_reason: str,
  billing_period: stringOrNull,
  subtotal: str,
  total_discount: str,
  total_tax: str,
  total_prepaid_credits_applied: str,
  adjustment_amount: str,
  total: str,
  amount_due: str,
  amount_paid: str,
  amount_remaining: str,
  overpaid_amount: str,
  refunded_amount: str,
  invoice_number: stringOrNull,
  billing_sequence: integerOrNull,
  idempotency_key: str,
  description: stringOrNull,
  period_start: dateTimeOrNull,
  period_end: dateTimeOrNull,
  issue_date: dateTimeOrNull,
  due_date: dateTimeOrNull,
  finalized_at: dateTimeOrNull,
  paid_at: dateTimeOrNull,
  voided_at: dateTimeOrNull,
  last_computed_at: dateTimeOrNull,
  version: integer,
  invoice_pdf_url: str,
  /** on single-invoice answers */
  line_items: { type: 'array', items: ref('InvoiceLineItem') },
  /** on single-invoice answers */
  coupon_applications: { type: 'array', items: ref('CouponApplication') },
  /** on single-invoice answers */
  taxes: { type: 'array', items: ref('AppliedTax') },
  /** POST /invoices/search with expand=customer */
  customer: { anyOf: [ref('Customer'), { type: 'null' }] },
  /** POST /invoices/search with expand=subscription */
  subscription: { anyOf: [ref('Subscription'), { type: 'null' }] },
}

export const invoiceSchema = recordSchema('Invoice', invoiceProperties, { optional: ['line_items', 'coupon_applications', 'taxes', 'customer', 'subscription'] })

export const invoiceLineItemSchema = recordSchema('InvoiceLineItem', {
  invoice_id: str,
  customer_id: str,
  subscription_id: stringOrNull,
  subscription_line_item_id: stringOrNull,
  price_id: stringOrNull,
  price_type: stringOrNull,
  meter_id: stringOrNull,
  currency: str,
  display_name: stringOrNull,
  amount: str,
  quantity: str,
  adjusted_entitlement_quantity: stringOrNull,
  line_item_discount: str,
  invoice_level_discount: str,
  prepaid_credits_applied: str,
  /** usage lines: the usage by source and group (spec: usage_analytics) */
  usage_analytics: anyJson,
  usage_breakdown: anyJson,
  commitment_info: anyJson,
  period_start: dateTimeOrNull,
  period_end: dateTimeOrNull,
})

export const couponApplicationSchema = recordSchema('CouponApplication', {
  invoice_id: str,
  invoice_line_item_id: stringOrNull,
  subscription_id: stringOrNull,
  coupon_id: str,
  coupon_association_id: stringOrNull,
  currency: str,
  applied_at: dateTimeString,
  /** the coupon as it was when applied */
  coupon_snapshot: anyJson,
  discount_percentage: stringOrNull,
  discounted_amount: str,
  original_price: str,
  final_price: str,
})

export const appliedTaxSchema = recordSchema('AppliedTax', {
  entity_type: str,
  entity_id: str,
  tax_rate_id: str,
  tax_association_id: stringOrNull,
  currency: str,
  idempotency_key: stringOrNull,
  tax_amount: str,
  taxable_amount: str,
  applied_at: dateTimeString,
  tax_rate: {
    anyOf: [
      objectOf({ ...recordBaseProperties, code: str, name: str, description: stringOrNull, fixed_value: stringOrNull, percentage_value: stringOrNull, currency: stringOrNull }),
      { type: 'null' },
    ],
  },
})

export const invoicePaymentSchema = recordSchema('InvoicePayment', {
  invoice_id: str,
  amount: str,
  currency: str,
  reference: stringOrNull,
  idempotency_key: stringOrNull,
  paid_at: dateTimeString,
})

/** POST /invoices/{id}/payments: the payment and the invoice after it. */
export const recordedPaymentSchema = recordSchema('RecordedPayment', {
  invoice_id: str,
  amount: str,
  currency: str,
  reference: stringOrNull,
  idempotency_key: stringOrNull,
  paid_at: dateTimeString,
  invoice: ref('Invoice'),
})
