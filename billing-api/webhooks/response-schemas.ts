// Response schemas of the outbound webhook routes (registered by module.ts, referred to by $id).
import { dateTimeOrNull, dateTimeString, integer, integerOrNull, objectOf, recordSchema, recordBaseProperties, str, stringArray, stringOrNull } from '../http/response-schemas.js'

export const webhookEndpointSchema = recordSchema('WebhookEndpoint', {
  url: str,
  /** empty: every event type */
  event_types: stringArray,
  description: stringOrNull,
  /** in full once, when the endpoint is created; obscured (whsec_****abcd) afterwards */
  secret: str,
})

const deliveryProperties = {
  endpoint_id: str,
  event_id: str,
  event_name: str,
  delivery_status: str,
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
