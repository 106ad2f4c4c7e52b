// Response schemas of the subscription routes (registered by module.ts, referred to by $id).
import { alwaysNull, anyJson, bool, dateTimeOrNull, dateTimeString, integer, objectOf, recordSchema, ref, str, stringArray, stringOrNull, money } from '../http/response-schemas.js'

const subscriptionProperties = {
  customer_id: str,
  invoicing_customer_id: stringOrNull,
  plan_id: str,
  currency: str,
  subscription_status: str,
  subscription_type: str,
  parent_subscription_id: stringOrNull,
  lookup_key: stringOrNull,
  billing_cadence: str,
  billing_period: str,
  billing_period_count: integer,
  billing_cycle: str,
  billing_anchor: dateTimeString,
  start_date: dateTimeString,
  end_date: dateTimeOrNull,
  current_period_start: dateTimeString,
  current_period_end: dateTimeString,
  trial_start: dateTimeOrNull,
  trial_end: dateTimeOrNull,
  cancel_at: dateTimeOrNull,
  cancelled_at: dateTimeOrNull,
  cancel_at_period_end: bool,
  cancellation_type: stringOrNull,
  collection_method: str,
  payment_behavior: str,
  auto_invoice_threshold: stringOrNull,
  commitment_amount: stringOrNull,
  overage_factor: stringOrNull,
  enable_true_up: bool,
  synced_price_sequence: integer,
  version: integer,
  /** on single-subscription answers; null in lists */
  line_items: { type: ['array', 'null'], items: ref('SubscriptionLineItem') },
  /** on GET /v1/subscriptions/{id}: the schedule (subscription phases); null elsewhere */
  phases: { type: ['array', 'null'], items: ref('SubscriptionPhase') },
  // Not expanded on a subscription (read them at their own routes), or not kept by Meterline
  // (pauses were removed by the spec; no customer timezone, payment method, payment terms,
  // commitment duration or default proration on the subscription): null for clients that
  // require the keys.
  customer: alwaysNull,
  plan: alwaysNull,
  coupon_associations: alwaysNull,
  credit_grants: alwaysNull,
  latest_invoice: alwaysNull,
  pauses: alwaysNull,
  active_pause_id: alwaysNull,
  pause_status: alwaysNull,
  customer_timezone: alwaysNull,
  gateway_payment_method_id: alwaysNull,
  payment_terms: alwaysNull,
  commitment_duration: alwaysNull,
  proration_behavior: alwaysNull,
}
export const subscriptionSchema = recordSchema('Subscription', subscriptionProperties)

/** GET /v2/subscriptions/{id}: the v1 read and whether the plan's prices changed since the subscription synced them. */
export const subscriptionV2Schema = recordSchema('SubscriptionV2', { ...subscriptionProperties, plan_prices_out_of_sync: bool })

export const subscriptionLineItemSchema = recordSchema('SubscriptionLineItem', {
  subscription_id: str,
  customer_id: str,
  price_id: str,
  meter_id: stringOrNull,
  currency: str,
  display_name: stringOrNull,
  quantity: str,
  start_date: dateTimeString,
  end_date: dateTimeOrNull,
  commitment_amount: stringOrNull,
  commitment_quantity: stringOrNull,
  commitment_overage_factor: stringOrNull,
  commitment_true_up_enabled: bool,
  commitment_windowed: bool,
  /** windowed commitments: the buckets of the period */
  commitment_time_buckets: anyJson,
  addon_association_id: stringOrNull,
  subscription_phase_id: stringOrNull,
  // The price's own fields are read at /prices/{price_id}; the line item keeps no copy of them, nor
  // a commitment type or duration (its commitment is the amount or quantity above): null for
  // clients that require the keys.
  price: alwaysNull,
  price_type: alwaysNull,
  price_unit: alwaysNull,
  price_unit_id: alwaysNull,
  billing_period: alwaysNull,
  billing_period_count: alwaysNull,
  invoice_cadence: alwaysNull,
  trial_period: alwaysNull,
  entity_id: alwaysNull,
  entity_type: alwaysNull,
  meter_display_name: alwaysNull,
  plan_display_name: alwaysNull,
  commitment_type: alwaysNull,
  commitment_duration: alwaysNull,
})

export const inheritedSchema = objectOf({
  subscription: ref('Subscription'),
  inherited_subscriptions: { type: 'array', items: ref('Subscription') },
})

const prorationPreview = objectOf({
  subscription_id: str,
  customer_id: str,
  currency: str,
  billing_reason: str,
  period_start: dateTimeString,
  period_end: dateTimeString,
  subtotal: money,
  total: money,
  line_items: {
    type: 'array',
    items: objectOf({
      subscription_line_item_id: stringOrNull,
      price_id: str,
      price_type: str,
      display_name: stringOrNull,
      quantity: str,
      amount: money,
      period_start: dateTimeString,
      period_end: dateTimeString,
    }),
  },
})

/** quantity_change, add_line_item, remove_line_item */
const lineItemChangePreview = objectOf({
  subscription_id: str,
  change_type: str,
  line_item_id: stringOrNull,
  price_id: str,
  old_quantity: stringOrNull,
  new_quantity: str,
  effective_date: dateTimeString,
  proration_behavior: str,
  invoice_preview: prorationPreview,
})

/** plan_change, addon_attach, addon_detach */
const lineSetChangePreview = objectOf({
  subscription_id: str,
  change_type: str,
  effective_date: dateTimeString,
  proration_behavior: str,
  old_plan_id: stringOrNull,
  new_plan_id: stringOrNull,
  addon_id: stringOrNull,
  addon_association_id: stringOrNull,
  end_date: dateTimeOrNull,
  ended_line_item_ids: stringArray,
  new_line_items: {
    type: 'array',
    items: objectOf({
      price_id: str,
      display_name: stringOrNull,
      quantity: str,
      start_date: dateTimeString,
      end_date: dateTimeOrNull,
      billing_period: stringOrNull,
      billing_period_count: integer,
    }),
  },
  invoice_preview: prorationPreview,
})

const grouping = objectOf({ subscription_type: str, invoicing_customer_id: stringOrNull, parent_subscription_id: stringOrNull })

/** grouped_invoicing_add, grouped_invoicing_remove */
const groupedInvoicingPreview = objectOf({
  subscription_id: str,
  change_type: str,
  effective_date: dateTimeString,
  changed: bool,
  before: grouping,
  after: grouping,
  invoice_preview: { type: 'null' },
})

/** The preview of POST /subscriptions/{id}/modify/preview, by change type. */
export const modifyPreviewSchema = { anyOf: [lineItemChangePreview, lineSetChangePreview, groupedInvoicingPreview] }

export const modifyResultSchema = objectOf({
  subscription: ref('Subscription'),
  /** the proration invoice, when the change made one */
  invoice: { anyOf: [ref('Invoice'), { type: 'null' }] },
})

// Flexprice's plan change and add-on attachment answers (flexprice-routes.ts).
const planSummary = objectOf({ id: str, name: str, lookup_key: stringOrNull, description: stringOrNull }, { nullable: true })

const prorationDetails = objectOf({
  charge_amount: money, credit_amount: money, net_amount: money, charge_description: alwaysNull, credit_description: alwaysNull,
  currency: str, current_period_start: dateTimeString, current_period_end: dateTimeString,
  days_used: integer, days_remaining: integer, proration_date: dateTimeString,
})

const subscriptionSummary = objectOf({
  id: str, plan_id: str, status: str, billing_anchor: dateTimeString, created_at: dateTimeString,
  current_period_start: dateTimeString, current_period_end: dateTimeString, archived_at: alwaysNull,
})

export const subscriptionChangePreviewSchema = objectOf({
  subscription_id: str,
  /** upgrade, downgrade or lateral: by the sign of the proration's net amount */
  change_type: str,
  effective_date: dateTimeString,
  current_plan: planSummary,
  target_plan: planSummary,
  proration_details: prorationDetails,
  next_invoice_preview: objectOf({
    currency: str, subtotal: money, tax_amount: alwaysNull, total: money, due_date: alwaysNull,
    line_items: {
      type: 'array',
      /** a proration line: a credit (negative) for what ends, a charge for what starts; unit_price is not kept */
      items: objectOf({
        description: stringOrNull, price_id: str, quantity: str, unit_price: alwaysNull, amount: money, is_proration: bool,
        period_start: dateTimeString, period_end: dateTimeString,
      }),
    },
  }),
  new_billing_cycle: alwaysNull,
  metadata: alwaysNull,
  warnings: stringArray,
})

export const subscriptionChangeExecuteSchema = objectOf({
  change_type: str,
  effective_date: dateTimeString,
  is_scheduled: bool,
  schedule_id: alwaysNull,
  scheduled_at: alwaysNull,
  old_subscription: subscriptionSummary,
  new_subscription: subscriptionSummary,
  /** the proration invoice, when the change made one */
  invoice: { anyOf: [ref('Invoice'), { type: 'null' }] },
  proration_applied: prorationDetails,
  credit_grants: alwaysNull,
  metadata: alwaysNull,
})

export const addonAssociationSchema = recordSchema('AddonAssociation', {
  addon_id: str,
  /** the subscription */
  entity_id: str,
  entity_type: str,
  addon_status: str,
  start_date: dateTimeString,
  end_date: dateTimeOrNull,
  cancelled_at: dateTimeOrNull,
  cancellation_reason: alwaysNull,
  addon: alwaysNull,
  subscription: alwaysNull,
})
