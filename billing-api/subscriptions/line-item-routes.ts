// Subscription line items one at a time, the routes Flexprice's SDK calls: adding and ending one
// are the modifications add_line_item and remove_line_item (modify.ts: same rules, same proration
// invoice); PUT changes a current line item's metadata only (its price and quantity change
// through /modify, its commitment through /line_items/{id}/commitment).
import type { FastifyInstance } from 'fastify'
import { NotFoundError } from '../../platform/errors.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { dateTime, idParams, metadataSchema, nonNegativeDecimalString } from '../http/schemas.js'
import { ref } from '../http/response-schemas.js'
import { typed } from '../http/typed-routes.js'
import { D } from '../pricing/index.js'
import { applyModification, PRORATION_BEHAVIORS } from './modify.js'
import { serializeLineItem } from './routes.js'
import { SubscriptionLineItemSchema, type SubscriptionLineItem } from './subscription.entity.js'

const tags = ['subscriptions']
const effective = { effective_date: dateTime, proration_behavior: { type: 'string', enum: PRORATION_BEHAVIORS } } as const

const createBody = {
  type: 'object',
  required: ['price_id'],
  additionalProperties: false,
  properties: {
    price_id: { type: 'string', minLength: 1, maxLength: 100 },
    // a count (Flexprice's SDK sends a JSON number) or a decimal string
    quantity: { anyOf: [{ type: 'integer', minimum: 1 }, nonNegativeDecimalString] },
    ...effective,
  },
} as const

const updateBody = { type: 'object', required: ['metadata'], additionalProperties: false, properties: { metadata: metadataSchema } } as const
const deleteBody = { type: 'object', additionalProperties: false, properties: { effective_from: dateTime, proration_behavior: effective.proration_behavior } } as const

async function findLineItem(ctx: BillingContext, scope: Scope, id: string, status: 'published' | { $ne: 'deleted' }): Promise<SubscriptionLineItem> {
  const line = await ctx.orm.em.fork().findOne(SubscriptionLineItemSchema, { id, ...scope, status })
  if (!line) throw new NotFoundError('subscription line item', id)
  return line
}

export function lineItemRoutes(instance: FastifyInstance, ctx: BillingContext): void {
  const app = typed(instance)

  app.post('/subscriptions/:id/lineitems', { schema: { response: { 201: ref('SubscriptionLineItem') }, tags, params: idParams, body: createBody } }, async (request, reply) => {
    const { quantity, ...body } = request.body
    const input = { change_type: 'add_line_item' as const, ...body, ...(quantity !== undefined ? { quantity: D(String(quantity)).toString() } : {}) }
    const applied = await applyModification(ctx, scopeOf(request), request.auth.userId, request.params.id, input)
    const added = applied.lineItems.filter((l) => l.price_id === body.price_id).at(-1)!
    return reply.code(201).send(serializeLineItem(added))
  })

  app.put('/subscriptions/lineitems/:id', { schema: { response: { 200: ref('SubscriptionLineItem') }, tags, params: idParams, body: updateBody } }, async (request) => {
    const scope = scopeOf(request)
    const em = ctx.orm.em.fork()
    const line = await em.findOne(SubscriptionLineItemSchema, { id: request.params.id, ...scope, status: 'published' })
    if (!line) throw new NotFoundError('subscription line item', request.params.id)
    line.metadata = request.body.metadata
    line.updated_by = request.auth.userId
    await em.flush()
    return serializeLineItem(line)
  })

  // Ends the line item at effective_from (default now), with a credit for the rest of the period when billed in advance.
  app.delete('/subscriptions/lineitems/:id', { schema: { response: { 200: ref('SubscriptionLineItem') }, tags, params: idParams, body: deleteBody } }, async (request) => {
    const scope = scopeOf(request)
    const line = await findLineItem(ctx, scope, request.params.id, 'published')
    const { effective_from, proration_behavior } = request.body ?? {}
    await applyModification(ctx, scope, request.auth.userId, line.subscription_id, {
      change_type: 'remove_line_item', line_item_id: line.id, ...(effective_from ? { effective_date: effective_from } : {}), ...(proration_behavior ? { proration_behavior } : {}),
    })
    return serializeLineItem(await findLineItem(ctx, scope, line.id, { $ne: 'deleted' }))
  })
}
