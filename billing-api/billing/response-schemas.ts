// Response schemas of the invoice preview and compute routes.
import { dateTimeOrNull, dateTimeString, integer, objectOf, str, stringOrNull, money } from '../http/response-schemas.js'

/** POST /invoices/internal/preview: the period's invoice as billing would compute it now (nothing stored). */
export const invoicePreviewSchema = objectOf({
  subscription_id: str,
  customer_id: str,
  currency: str,
  billing_reason: str,
  invoice_status: str,
  period_start: dateTimeString,
  period_end: dateTimeString,
  subtotal: money,
  total_discount: money,
  total_tax: money,
  total: money,
  amount_due: money,
  line_items: {
    type: 'array',
    items: objectOf({
      subscription_line_item_id: str,
      price_id: str,
      price_type: str,
      meter_id: stringOrNull,
      display_name: stringOrNull,
      quantity: str,
      amount: money,
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
      discounted_amount: money,
      original_price: money,
      final_price: money,
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
