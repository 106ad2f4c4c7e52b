// Response schemas of the outbound webhook routes (registered by module.ts, referred to by $id).
import { dateTimeOrNull, dateTimeString, integer, integerOrNull, objectOf, recordSchema, recordBaseProperties, str, stringArray, stringOrNull } from '../http/response-schemas.js'

export const webhookEndpointSchema = recordSchema('WebhookEndpoint', {
  url: str,
  /** empty: every event type */
  event_types: stringArray,
  description: stringOrNull,
  /** in full once, when the endpoint is created; obscured (whsec_****abcd) afterwards */
  secret: str,
  /** disabled: no new deliveries; its PENDING ones were CANCELLED (POST .../enable resumes) */
  disabled: { type: 'boolean' },
  disabled_at: dateTimeOrNull,
})

const deliveryProperties = {
  endpoint_id: str,
  event_id: str,
  event_name: str,
  /** PENDING, SUCCEEDED, FAILED, or CANCELLED (its endpoint was deleted or disabled: cancel_reason) */
  delivery_status: str,
  cancel_reason: stringOrNull,
  attempts: integer,
  last_status_code: integerOrNull,
  last_error: stringOrNull,
  delivered_at: dateTimeOrNull,
}

export const webhookDeliverySchema = recordSchema('WebhookDelivery', deliveryProperties)

/** GET /webhooks/deliveries/{id}: the delivery with every attempt. */
export const webhookDeliveryDetailSchema = objectOf({
  ...recordBaseProperties,
  ...deliveryProperties,
  attempt_log: {
    type: 'array',
    items: objectOf({ attempt: integer, status_code: integerOrNull, latency_ms: integer, error: stringOrNull, created_at: dateTimeString }),
  },
})
