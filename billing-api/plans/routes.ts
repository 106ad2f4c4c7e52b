import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { idParams, listResponse, paginationQuery } from '../http/schemas.js'
import { createPlanBody, searchPlansBody, updatePlanBody } from './schemas.js'
import { serializePlan } from './serialize.js'
import { archivePlan, createPlan, readPlan, searchPlans, updatePlan, type PlanDetail } from './service.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { deletedMessage, pageOf, ref } from '../http/response-schemas.js'

// Other modules import these from here.
export { priceInputSchema } from './schemas.js'
export { serializePlan, serializePrice } from './serialize.js'

const detail = (d: PlanDetail) => serializePlan(d.plan, d.prices, d.creditGrants, d.entitlements)

export async function planRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const em = () => ctx.orm.em.fork()
  const id = (params: unknown) => (params as { id: string }).id

  app.post('/plans', { schema: { response: { 201: ref('Plan') }, tags: ['plans'], body: createPlanBody } }, async (request, reply) => {
    const { plan, prices } = await createPlan(em(), scopeOf(request), request.auth.userId, request.body)
    return reply.code(201).send(serializePlan(plan, prices, [], []))
  })

  app.get('/plans', { schema: { response: { 200: pageOf(ref('Plan')) }, tags: ['plans'], querystring: { type: 'object', properties: paginationQuery } } }, async (request) => {
    const q = request.query
    const { items, total } = await searchPlans(em(), scopeOf(request), q)
    return listResponse(items.map((p) => serializePlan(p.plan, p.prices)), total, q)
  })

  app.post('/plans/search', { config: READS, schema: { response: { 200: pageOf(ref('Plan')) }, tags: ['plans'], body: searchPlansBody } }, async (request) => {
    const search = request.body
    const { items, total } = await searchPlans(em(), scopeOf(request), search)
    return listResponse(items.map((p) => serializePlan(p.plan, p.prices)), total, search)
  })

  app.get('/plans/:id', { schema: { response: { 200: ref('Plan') }, tags: ['plans'], params: idParams } }, async (request) => {
    return detail(await readPlan(em(), scopeOf(request), id(request.params)))
  })

  // Flexprice's SDK reads a plan's entitlements as the plan itself, which carries them.
  app.get('/plans/:id/entitlements', { schema: { response: { 200: ref('Plan') }, tags: ['plans'], params: idParams } }, async (request) => {
    return detail(await readPlan(em(), scopeOf(request), id(request.params)))
  })

  app.put('/plans/:id', { schema: { response: { 200: ref('Plan') }, tags: ['plans'], params: idParams, body: updatePlanBody } }, async (request) => {
    return detail(await updatePlan(em(), scopeOf(request), request.auth.userId, id(request.params), request.body))
  })

  app.delete('/plans/:id', { schema: { response: { 200: deletedMessage }, tags: ['plans'], params: idParams } }, async (request) => {
    await archivePlan(em(), scopeOf(request), request.auth.userId, id(request.params))
    return { message: `${id(request.params)} deleted` }
  })
}
