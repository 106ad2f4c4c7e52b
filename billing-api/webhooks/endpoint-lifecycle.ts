// Deleting, disabling and enabling an endpoint. Deleting or disabling cancels, in the same
// transaction, its deliveries still PENDING (first attempt queued or retries with backoff to
// come): they turn CANCELLED with cancel_reason endpoint_deleted / endpoint_disabled and show
// so in the deliveries list. Their queued jobs stay in BullMQ until due and then end without an
// attempt (process-delivery.ts checks the delivery and the endpoint before every attempt, which
// also covers an attempt picked while the endpoint was being deleted).
//
// A disabled endpoint gets no new deliveries: events published while it is disabled are not
// delivered to it, also after it is enabled again. Enabling does not revive the cancelled
// deliveries; POST /webhooks/{id}/retry sends one again once the endpoint is enabled.
// FAILED deliveries (attempts exhausted) stay FAILED; the stale retry job skips them.
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import type { Scope } from '../db/scope.js'
import { WebhookDeliverySchema, WebhookEndpointSchema, type CancelReason, type WebhookEndpoint } from './webhook.entity.js'

/** Cancels the endpoint's PENDING deliveries; returns how many. */
export function cancelPendingDeliveries(em: EntityManager, scope: Scope, endpointId: string, reason: CancelReason): Promise<number> {
  return em.nativeUpdate(WebhookDeliverySchema, { ...scope, endpoint_id: endpointId, delivery_status: 'PENDING' }, { delivery_status: 'CANCELLED', cancel_reason: reason })
}

export async function deleteEndpoint(em: EntityManager, scope: Scope, endpointId: string, userId: string | null): Promise<{ cancelled: number }> {
  return em.transactional(async (tx) => {
    const updated = await tx.nativeUpdate(WebhookEndpointSchema, { id: endpointId, ...scope, status: 'published' }, { status: 'deleted', updated_by: userId })
    if (!updated) throw new NotFoundError('webhook endpoint', endpointId)
    return { cancelled: await cancelPendingDeliveries(tx, scope, endpointId, 'endpoint_deleted') }
  })
}

/** Disables (cancelling its pending deliveries) or enables an endpoint; the same state again changes nothing. */
export async function setEndpointDisabled(
  em: EntityManager, clock: Clock, scope: Scope, endpointId: string, disabled: boolean, userId: string | null,
): Promise<{ endpoint: WebhookEndpoint; cancelled: number }> {
  return em.transactional(async (tx) => {
    const endpoint = await tx.findOne(WebhookEndpointSchema, { id: endpointId, ...scope, status: 'published' }, { lockMode: LockMode.PESSIMISTIC_WRITE })
    if (!endpoint) throw new NotFoundError('webhook endpoint', endpointId)
    let cancelled = 0
    if (disabled && !endpoint.disabled_at) {
      endpoint.disabled_at = clock.now()
      endpoint.updated_by = userId
      cancelled = await cancelPendingDeliveries(tx, scope, endpointId, 'endpoint_disabled')
    } else if (!disabled && endpoint.disabled_at) {
      endpoint.disabled_at = null
      endpoint.updated_by = userId
    }
    await tx.flush()
    return { endpoint, cancelled }
  })
}
