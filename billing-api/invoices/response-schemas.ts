// Response schemas of the invoice routes (registered by module.ts, referred to by $id).
import { alwaysNull, anyJson, bool, objectOf, dateTimeOrNull, dateTimeString, integer, integerOrNull, metadataResponse, recordSchema, ref, str, stringOrNull, money } from '../http/response-schemas.js'

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
  subtotal: money,
  total_discount: money,
  total_tax: money,
  total_prepaid_credits_applied: money,
  adjustment_amount: money,
  total: money,
  amount_due: money,
  amount_paid: money,
  amount_remaining: money,
  overpaid_amount: money,
  refunded_amount: money,
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
  /** on single-invoice answers; null in lists */
  line_items: { type: ['array', 'null'], items: ref('InvoiceLineItem') },
  /** on single-invoice answers; null in lists */
  coupon_applications: { type: ['array', 'null'], items: ref('CouponApplication') },
  /** on single-invoice answers; null in lists */
  taxes: { type: ['array', 'null'], items: ref('AppliedTax') },
  /** POST /invoices/search with expand=customer; null otherwise */
  customer: { anyOf: [ref('Customer'), { type: 'null' }] },
  /** POST /invoices/search with expand=subscription; null otherwise */
  subscription: { anyOf: [ref('Subscription'), { type: 'null' }] },
}

export const invoiceSchema = recordSchema('Invoice', invoiceProperties)

/** A state change's answer (finalize, void): the invoice after the change and `message`, what was done. */
export const invoiceStateChangeSchema = recordSchema('InvoiceStateChange', { ...invoiceProperties, message: str })

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
  amount: money,
  quantity: str,
  adjusted_entitlement_quantity: stringOrNull,
  line_item_discount: money,
  invoice_level_discount: money,
  prepaid_credits_applied: money,
  /** usage lines: the usage by source and group (spec: usage_analytics) */
  usage_analytics: anyJson,
  usage_breakdown: anyJson,
  commitment_info: anyJson,
  period_start: dateTimeOrNull,
  period_end: dateTimeOrNull,
  // Not kept on an invoice line (read the price and the subscription line item): null for clients
  // that require the keys.
  entity_id: alwaysNull,
  entity_type: alwaysNull,
  meter_display_name: alwaysNull,
  plan_display_name: alwaysNull,
  price_unit: alwaysNull,
  price_unit_id: alwaysNull,
  price_unit_amount: alwaysNull,
})

/** The record fields of something computed and not stored: no id, no timestamps, no author. */
const unsavedRecordProperties = {
  id: alwaysNull, tenant_id: str, environment_id: str, status: alwaysNull, metadata: metadataResponse,
  created_at: alwaysNull, updated_at: alwaysNull, created_by: alwaysNull, updated_by: alwaysNull,
}

/**
 * POST /invoices/preview (billing/preview-document.ts): the invoice a subscription's period would
 * get, in the Invoice shape, computed and not stored, so without the fields only a stored
 * invoice has (its id, number, version, document, line ids).
 */
export const invoicePreviewDocumentSchema = {
  $id: 'InvoicePreviewDocument',
  ...objectOf({
    ...unsavedRecordProperties,
    ...invoiceProperties,
    idempotency_key: alwaysNull,
    version: alwaysNull,
    invoice_pdf_url: alwaysNull,
    line_items: {
      type: 'array',
      items: objectOf({ ...(invoiceLineItemSchema.properties as Record<string, Record<string, unknown>>), ...unsavedRecordProperties, invoice_id: alwaysNull }),
    },
    coupon_applications: alwaysNull,
    taxes: { type: 'array', maxItems: 0 },
    customer: alwaysNull,
    subscription: alwaysNull,
  }),
}

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
  discounted_amount: money,
  original_price: money,
  final_price: money,
})

export const appliedTaxSchema = recordSchema('AppliedTax', {
  entity_type: str,
  entity_id: str,
  tax_rate_id: str,
  tax_association_id: stringOrNull,
  currency: str,
  idempotency_key: stringOrNull,
  tax_amount: money,
  taxable_amount: money,
  applied_at: dateTimeString,
  tax_rate: { anyOf: [ref('TaxRate'), { type: 'null' }] },
})

const recordedPayment = {
  invoice_id: str,
  amount: money,
  currency: str,
  reference: stringOrNull,
  idempotency_key: stringOrNull,
  paid_at: dateTimeString,
} as const

export const invoicePaymentSchema = recordSchema('InvoicePayment', recordedPayment)

/** /payments (Flexprice's resource): a recorded payment with its destination invoice; gateway fields null unless a provider reported it. */
export const paymentSchema = recordSchema('Payment', {
  ...recordedPayment,
  destination_id: str,
  destination_type: str,
  invoice_number: stringOrNull,
  payment_method_type: stringOrNull,
  payment_gateway: stringOrNull,
  gateway_payment_id: stringOrNull,
  payment_status: str,
  succeeded_at: dateTimeString,
  failed_at: alwaysNull,
  refunded_at: alwaysNull,
  error_message: alwaysNull,
  payment_method_id: alwaysNull,
  payment_url: alwaysNull,
  gateway_tracking_id: alwaysNull,
  gateway_metadata: alwaysNull,
  attempts: alwaysNull,
  track_attempts: bool,
  save_card_and_make_default: bool,
})

/** POST /invoices/{id}/payments: the payment and the invoice after it. */
export const recordedPaymentSchema = recordSchema('RecordedPayment', {
  invoice_id: str,
  amount: money,
  currency: str,
  reference: stringOrNull,
  idempotency_key: stringOrNull,
  paid_at: dateTimeString,
  invoice: ref('Invoice'),
})

/** GET /customers/{id}/invoices/summary: FINALIZED invoices per currency (summary-routes.ts). */
export const customerInvoiceSummarySchema = objectOf({
  customer_id: str,
  default_currency: stringOrNull,
  summaries: {
    type: 'array',
    items: objectOf({
      customer_id: str, currency: str, total_invoice_count: integer, total_revenue_amount: money,
      total_unpaid_amount: money, unpaid_invoice_count: integer, total_overdue_amount: money, overdue_invoice_count: integer,
      unpaid_fixed_charges: alwaysNull, unpaid_usage_charges: alwaysNull,
    }),
  },
})
