// Response schemas of the invoice preview and compute routes.
import { dateTimeOrNull, dateTimeString, integer, objectOf, str, stringOrNull } from '../http/response-schemas.js'

/** POST /invoices/internal/preview: the period's invoice as billing would compute it now (nothing stored). */
export const invoicePreviewSchema = objectOf({
  subscription_id: str,
  customer_id: str,
  currency: str,
  billing_reason: str,
  invoice_status: str,
  period_start: dateTimeString,
  period_end: dateTimeString,
  subtotal: str,
  total_discount: str,
  total_tax: str,
  total: str,
  amount_due: str,
  line_items: {
    type: 'array',
    items: objectOf({
      subscription_line_item_id: str,
      price_id: str,
      price_type: str,
      meter_id: stringOrNull,
      display_name: stringOrNull,
      quantity: str,
      amount: str,
      line_item_discount: str,
      invoice_level_discount: str,
      period_start: dateTimeString,
      period_end: dateTimeString,
    }),
  },
  coupon_applications: {
    type: 'array',
    items: objectOf({
      coupon_id: str,
      coupon_association_id: str,
      subscription_line_item_id: stringOrNull,
      discount_percentage: stringOrNull,
      discounted_amount: str,
      original_price: str,
      final_price: str,
    }),
  },
})

/** POST /invoices/{id}/compute without sync: the queued job. */
export const computeQueuedSchema = objectOf({ workflow_id: str, status: str, invoice_id: str })

export const computeJobSchema = objectOf({
  workflow_id: str,
  status: str,
  invoice_id: str,
  attempts: integer,
  error: stringOrNull,
  created_at: dateTimeString,
  finished_at: dateTimeOrNull,
})
