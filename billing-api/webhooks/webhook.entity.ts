import { EntitySchema, OptionalProps } from '@mikro-orm/core'
import { baseColumns, integer, json, text, timestamp, type BaseRecord } from '../db/common.js'

export interface WebhookEndpoint extends BaseRecord {
  url: string
  /** system event names; empty means every event */
  event_types: string[]
  /** plaintext: only rows from before encryption at rest, until scripts/rotate-secrets.ts seals them */
  secret: string | null
  /** secret-at-rest.ts */
  secret_encrypted: string | null
  description: string | null
  /** set while the endpoint is disabled: no new deliveries, pending ones cancelled */
  disabled_at: Date | null
}

export const WebhookEndpointSchema = new EntitySchema<WebhookEndpoint>({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: { ...baseColumns<WebhookEndpoint>(), url: text(), event_types: json(), secret: text(true), secret_encrypted: text(true), description: text(true), disabled_at: timestamp(true) },
})

export type DeliveryStatus = 'PENDING' | 'SUCCEEDED' | 'FAILED' | 'CANCELLED'
/** why a delivery was CANCELLED */
export type CancelReason = 'endpoint_deleted' | 'endpoint_disabled'

export interface WebhookDelivery extends BaseRecord {
  endpoint_id: string
  event_id: string
  event_name: string
  payload: Record<string, unknown>
  delivery_status: DeliveryStatus
  attempts: number
  last_status_code: number | null
  last_error: string | null
  delivered_at: Date | null
  cancel_reason: CancelReason | null
}

export const WebhookDeliverySchema = new EntitySchema<WebhookDelivery>({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    ...baseColumns<WebhookDelivery>(),
    endpoint_id: text(),
    event_id: text(),
    event_name: text(),
    payload: json(),
    delivery_status: text(),
    attempts: integer(),
    last_status_code: integer(true),
    last_error: text(true),
    delivered_at: timestamp(true),
    cancel_reason: text(true),
  },
})

export interface WebhookAttempt {
  [OptionalProps]?: 'created_at'
  id: string
  tenant_id: string
  environment_id: string
  delivery_id: string
  attempt: number
  status_code: number | null
  latency_ms: number
  error: string | null
  created_at: Date
}

export const WebhookAttemptSchema = new EntitySchema<WebhookAttempt>({
  name: 'WebhookAttempt',
  tableName: 'webhook_attempts',
  properties: {
    id: { type: 'string', primary: true, columnType: 'text' },
    tenant_id: text(),
    environment_id: text(),
    delivery_id: text(),
    attempt: integer(),
    status_code: integer(true),
    latency_ms: integer(),
    error: text(true),
    created_at: { ...timestamp(), onCreate: () => new Date() },
  },
})
