// Response schemas of the subscription phase routes (registered by module.ts, referred to by $id).
import { dateTimeOrNull, dateTimeString, objectOf, recordSchema, str, stringArray } from '../http/response-schemas.js'

export const subscriptionPhaseSchema = recordSchema('SubscriptionPhase', {
  subscription_id: str,
  start_date: dateTimeString,
  end_date: dateTimeOrNull,
  /** the line set the phase switches to, as given */
  line_items: { type: 'array', items: objectOf({ price_id: str, quantity: str }, { optional: ['quantity'] }) },
  coupon_ids: stringArray,
  applied_at: dateTimeOrNull,
})
