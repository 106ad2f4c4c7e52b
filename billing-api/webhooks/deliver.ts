// One delivery attempt: POST the event, signed, with a timeout; every attempt is recorded.
// A non-2xx answer or a network error throws, so the queue retries with backoff. A URL the
// SSRF guard refuses (its host now resolves to a forbidden address) fails the delivery at once.
import type { MikroORM } from '@mikro-orm/postgresql'
import { UnrecoverableError } from 'bullmq'
import { OutboundUrlRefused, outboundRequest, type OutboundPolicy } from '../../platform/outbound-url-guard.js'
import { newId } from '../../platform/ids.js'
import type { Clock } from '../../platform/clock.js'
import type { SecretKeys } from '../../platform/secrets-at-rest.js'
import { openWebhookSecret } from './secret-at-rest.js'
import { signatureHeaders } from './signature.js'
import { WebhookAttemptSchema, WebhookDeliverySchema, WebhookEndpointSchema, type CancelReason } from './webhook.entity.js'

export class DeliveryFailed extends Error {}

export interface DeliverySettings {
  timeoutMs: number
  outbound: OutboundPolicy
  /** decrypts the endpoint's signing secret */
  keys: SecretKeys
}

export type AttemptResult = 'delivered' | 'already_delivered' | 'cancelled'

export async function attemptDelivery(orm: MikroORM, deliveryId: string, clock: Clock, settings: DeliverySettings): Promise<AttemptResult> {
  const em = orm.em.fork()
  const delivery = await em.findOneOrFail(WebhookDeliverySchema, { id: deliveryId })
  if (delivery.delivery_status === 'SUCCEEDED') return 'already_delivered'
  if (delivery.delivery_status === 'CANCELLED') return 'cancelled'
  const endpoint = await em.findOneOrFail(WebhookEndpointSchema, { id: delivery.endpoint_id, tenant_id: delivery.tenant_id })
  const gone = endpointGone(endpoint)
  if (gone) {
    await cancelDelivery(orm, deliveryId, gone)
    return 'cancelled'
  }
  const body = JSON.stringify(delivery.payload)
  // The webhook-id is the event's id, the same on every retry, so receivers can deduplicate.
  const headers = signatureHeaders(openWebhookSecret(settings.keys, endpoint).value, delivery.event_id, Math.floor(clock.now().getTime() / 1000), body)
  const started = performance.now()
  let statusCode: number | null = null
  let error: string | null = null
  let refused = false
  try {
    // A redirect is not followed: it counts as a non-2xx answer.
    const res = await outboundRequest(settings.outbound, endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Meterline-Webhooks/1', ...headers },
      body,
      timeoutMs: settings.timeoutMs,
      // The receiver's status decides; its answer body is read only to free the connection.
      maxResponseBytes: 64 * 1024,
    })
    statusCode = res.status
    if (res.status < 200 || res.status >= 300) error = `receiver answered ${res.status}`
  } catch (err) {
    refused = err instanceof OutboundUrlRefused
    error = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
  }
  const latency = Math.round(performance.now() - started)
  delivery.attempts += 1
  delivery.last_status_code = statusCode
  delivery.last_error = error
  if (!error) {
    delivery.delivery_status = 'SUCCEEDED'
    delivery.delivered_at = clock.now()
  } else if (refused) {
    delivery.delivery_status = 'FAILED'
  }
  em.create(WebhookAttemptSchema, {
    id: newId('whatt'), tenant_id: delivery.tenant_id, environment_id: delivery.environment_id, delivery_id: delivery.id,
    attempt: delivery.attempts, status_code: statusCode, latency_ms: latency, error,
  })
  await em.flush()
  if (refused) throw new UnrecoverableError(error!)
  if (error) throw new DeliveryFailed(error)
  return 'delivered'
}

/** Why an endpoint takes no more deliveries, if it does not (endpoint-lifecycle.ts). */
export function endpointGone(endpoint: { status: string; disabled_at: Date | null }): CancelReason | null {
  if (endpoint.status !== 'published') return 'endpoint_deleted'
  return endpoint.disabled_at ? 'endpoint_disabled' : null
}

/** A delivery picked after its endpoint was deleted or disabled (or a FAILED one re-queued): no attempt. */
export async function cancelDelivery(orm: MikroORM, deliveryId: string, reason: CancelReason): Promise<void> {
  await orm.em.fork().nativeUpdate(WebhookDeliverySchema, { id: deliveryId, delivery_status: { $in: ['PENDING', 'FAILED'] } }, { delivery_status: 'CANCELLED', cancel_reason: reason })
}

export async function markFailed(orm: MikroORM, deliveryId: string): Promise<void> {
  await orm.em.fork().nativeUpdate(WebhookDeliverySchema, { id: deliveryId, delivery_status: 'PENDING' }, { delivery_status: 'FAILED' })
}
