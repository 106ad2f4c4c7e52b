// Subscription phases: POST /subscriptions/{id}/phases schedules one, GET lists the schedule,
// DELETE /subscriptions/{id}/phases/{phase_id} removes a phase that has not started.
import type { FastifyInstance } from 'fastify'
import { typed } from '../http/typed-routes.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { dateTime, idParams, metadataSchema, nonNegativeDecimalString } from '../http/schemas.js'
import { serializePhase } from './phase.entity.js'
import { addPhase, deletePhase, listPhases } from './phase-service.js'
import { noContent, pageOf, ref } from '../http/response-schemas.js'

const refId = { type: 'string', minLength: 1, maxLength: 100 } as const

const createBody = {
  type: 'object',
  required: ['start_date', 'line_items'],
  additionalProperties: false,
  properties: {
    start_date: dateTime,
    line_items: {
      type: 'array',
      minItems: 1,
      maxItems: 20,
      items: { type: 'object', required: ['price_id'], additionalProperties: false, properties: { price_id: refId, quantity: nonNegativeDecimalString } },
    },
    coupon_ids: { type: 'array', maxItems: 10, uniqueItems: true, items: refId },
    metadata: metadataSchema,
  },
} as const

const phaseParams = { type: 'object', required: ['id', 'phase_id'], properties: { id: refId, phase_id: refId } } as const

const tags = ['subscriptions']

export async function subscriptionPhaseRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/subscriptions/:id/phases', { schema: { response: { 201: ref('SubscriptionPhase') }, tags, params: idParams, body: createBody } }, async (request, reply) => {
    const phase = await addPhase(ctx.orm.em.fork(), ctx.clock, scopeOf(request), request.auth.userId, request.params.id, request.body)
    return reply.code(201).send(serializePhase(phase))
  })

  app.get('/subscriptions/:id/phases', { schema: { response: { 200: pageOf(ref('SubscriptionPhase')) }, tags, params: idParams } }, async (request) => {
    const phases = await listPhases(ctx.orm.em.fork(), scopeOf(request), request.params.id)
    return { items: phases.map(serializePhase), pagination: { limit: phases.length, offset: 0, total: phases.length } }
  })

  app.delete('/subscriptions/:id/phases/:phase_id', { schema: { response: { 204: noContent }, tags, params: phaseParams } }, async (request, reply) => {
    const { id, phase_id } = request.params
    await deletePhase(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, id, phase_id)
    return reply.code(204).send()
  })
}
