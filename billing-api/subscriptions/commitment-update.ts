// Use case: replace the commitment of one current line item (PUT .../line_items/{id}/commitment).
// The new settings price every invoice computed afterwards, the current period's included.
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { MeterSchema } from '../meters/meter.entity.js'
import { PriceSchema } from '../plans/price.entity.js'
import { resolveLineCommitment, type LineItemCommitmentInput } from './commitments.js'
import { eventPayload, lockSubscription } from './service.js'
import { SubscriptionLineItemSchema } from './subscription.entity.js'

export interface UpdateLineCommitmentInput extends LineItemCommitmentInput {
  version?: number
}

/** Omitted settings are cleared: the body is the line item's whole commitment. */
export async function updateLineItemCommitment(em: EntityManager, scope: Scope, userId: string, id: string, lineItemId: string, input: UpdateLineCommitmentInput) {
  return em.transactional(async (tx) => {
    const sub = await lockSubscription(tx, scope, id, input.version)
    const lineItem = await tx.findOne(SubscriptionLineItemSchema, { id: lineItemId, subscription_id: id, ...scope, status: 'published' })
    if (!lineItem) throw new NotFoundError('line item', lineItemId)
    const price = await tx.findOneOrFail(PriceSchema, { id: lineItem.price_id, ...scope })
    const meter = input.commitment_time_buckets && price.meter_id ? await tx.findOne(MeterSchema, { id: price.meter_id, ...scope }) : null
    const { version: _version, ...settings } = input
    Object.assign(lineItem, resolveLineCommitment(settings, price, meter, 'body'), { updated_by: userId })
    // touching the subscription makes the flush bump its version
    sub.updated_by = userId
    sub.updated_at = new Date()
    publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
    await tx.flush()
    const lineItems = await tx.find(SubscriptionLineItemSchema, { subscription_id: id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
    return { subscription: sub, lineItems }
  })
}
