// One delivery attempt: POST the event, signed, with a timeout; every attempt is recorded.
// A non-2xx answer or a network error throws, so the queue retries with backoff.
import type { MikroORM } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import type { Clock } from '../../platform/clock.js'
import { signatureHeaders } from './signature.js'
import { WebhookAttemptSchema, WebhookDeliverySchema, WebhookEndpointSchema } from './webhook.entity.js'

export class DeliveryFailed extends Error {}

export async function attemptDelivery(orm: MikroORM, deliveryId: string, clock: Clock, timeoutMs: number): Promise<'delivered' | 'already_delivered'> {
  const em = orm.em.fork()
  const delivery = await em.findOneOrFail(WebhookDeliverySchema, { id: deliveryId })
  if (delivery.delivery_status === 'SUCCEEDED') return 'already_delivered'
  const endpoint = await em.findOneOrFail(WebhookEndpointSchema, { id: delivery.endpoint_id, tenant_id: delivery.tenant_id })
  const body = JSON.stringify(delivery.payload)
  // The webhook-id is the event's id, the same on every retry, so receivers can deduplicate.
  const headers = signatureHeaders(endpoint.secret, delivery.event_id, Math.floor(clock.now().getTime() / 1000), body)
  const started = performance.now()
  let statusCode: number | null = null
  let error: string | null = null
  try {
    const res = await fetch(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'Meterline-Webhooks/1', ...headers },
      body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    })
    statusCode = res.status
    // Read the body only to free the connection; the receiver's status decides, and a body
    // that fails to arrive changes nothing about it.
    await res.arrayBuffer().catch(() => undefined)
    if (res.status < 200 || res.status >= 300) error = `receiver answered ${res.status}`
  } catch (err) {
    error = err instanceof Error ? `${err.name}: ${err.message}` : String(err)
  }
  const latency = Math.round(performance.now() - started)
  delivery.attempts += 1
  delivery.last_status_code = statusCode
  delivery.last_error = error
  if (!error) {
    delivery.delivery_status = 'SUCCEEDED'
    delivery.delivered_at = clock.now()
  }
  em.create(WebhookAttemptSchema, {
    id: newId('whatt'), tenant_id: delivery.tenant_id, environment_id: delivery.environment_id, delivery_id: delivery.id,
    attempt: delivery.attempts, status_code: statusCode, latency_ms: latency, error,
  })
  await em.flush()
  if (error) throw new DeliveryFailed(error)
  return 'delivered'
}

export async function markFailed(orm: MikroORM, deliveryId: string): Promise<void> {
  await orm.em.fork().nativeUpdate(WebhookDeliverySchema, { id: deliveryId, delivery_status: 'PENDING' }, { delivery_status: 'FAILED' })
}
