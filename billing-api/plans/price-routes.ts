import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { RECORD_STATUSES } from '../http/metadata-filter.js'
import { idParams, listResponse, paginationQuery } from '../http/schemas.js'
import { createPriceBody, updatePriceBody } from './schemas.js'
import { serializePrice } from './serialize.js'
import { archivePrice, createPrice, getPrice, listPrices, updatePrice } from './price-service.js'
import { typed } from '../http/typed-routes.js'
import { noContent, pageOf, ref } from '../http/response-schemas.js'

const listQuery = {
  type: 'object',
  properties: {
    ...paginationQuery,
    entity_type: { type: 'string', enum: ['PLAN', 'ADDON'] },
    entity_id: { type: 'string', minLength: 1, maxLength: 100 },
    status: { type: 'string', enum: RECORD_STATUSES, default: 'published' },
  },
} as const

export async function priceRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const em = () => ctx.orm.em.fork()
  const id = (params: unknown) => (params as { id: string }).id

  app.post('/prices', { schema: { response: { 201: ref('Price') }, tags: ['prices'], body: createPriceBody } }, async (request, reply) => {
    const price = await createPrice(em(), scopeOf(request), request.auth.userId, request.body)
    return reply.code(201).send(serializePrice(price))
  })

  app.get('/prices', { schema: { response: { 200: pageOf(ref('Price')) }, tags: ['prices'], querystring: listQuery } }, async (request) => {
    const q = request.query
    const { items, total } = await listPrices(em(), scopeOf(request), q)
    return listResponse(items.map(serializePrice), total, q)
  })

  app.get('/prices/:id', { schema: { response: { 200: ref('Price') }, tags: ['prices'], params: idParams } }, async (request) => {
    return serializePrice(await getPrice(em(), scopeOf(request), id(request.params)))
  })

  app.put('/prices/:id', { schema: { response: { 200: ref('Price') }, tags: ['prices'], params: idParams, body: updatePriceBody } }, async (request) => {
    return serializePrice(await updatePrice(em(), scopeOf(request), request.auth.userId, id(request.params), request.body))
  })

  app.delete('/prices/:id', { schema: { response: { 204: noContent }, tags: ['prices'], params: idParams } }, async (request, reply) => {
    await archivePrice(em(), scopeOf(request), request.auth.userId, id(request.params))
    return reply.code(204).send()
  })
}
