import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { lineItemCommitmentProperties } from './commitments.js'
import { updateLineItemCommitment } from './commitment-update.js'
import { serializeSubscription } from './routes.js'
import { typed } from '../http/typed-routes.js'
import { ref } from '../http/response-schemas.js'

export async function subscriptionCommitmentRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.put(
    '/subscriptions/:id/line_items/:line_item_id/commitment',
    {
      schema: {
        response: { 200: ref('Subscription') },
        tags: ['subscriptions'],
        params: { type: 'object', required: ['id', 'line_item_id'], properties: { id: { type: 'string' }, line_item_id: { type: 'string' } } },
        body: { type: 'object', additionalProperties: false, properties: { ...lineItemCommitmentProperties, version: { type: 'integer', minimum: 1 } } },
      },
    },
    async (request) => {
      const { id, line_item_id } = request.params
      const { subscription, lineItems } = await updateLineItemCommitment(
        ctx.orm.em.fork(), scopeOf(request), request.auth.userId, id, line_item_id, request.body,
      )
      return serializeSubscription(subscription, lineItems)
    },
  )
}
