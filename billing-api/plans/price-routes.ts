import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { RECORD_STATUSES } from '../http/metadata-filter.js'
import { bulkBodyOf, idListSchema, idParams, listResponse, paginationQuery } from '../http/schemas.js'
import { createPriceBody, updatePriceBody } from './schemas.js'
import { serializePrice } from './serialize.js'
import { archivePrice, createPrice, getPrice, createPrices, getPriceByLookupKey, listPrices, updatePrice } from './price-service.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { lookupKeyParams } from '../http/catalog-schemas.js'
import { deletedMessage, itemsOf, pageOf, ref } from '../http/response-schemas.js'

const listQuery = {
  type: 'object',
  properties: {
    ...paginationQuery,
    entity_type: { type: 'string', enum: ['PLAN', 'ADDON'] },
    entity_id: { type: 'string', minLength: 1, maxLength: 100 },
    status: { type: 'string', enum: RECORD_STATUSES, default: 'published' },
  },
} as const

/** The list's filters as a JSON body, in the form Flexprice's SDK sends them. */
const searchBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...listQuery.properties,
    entity_ids: idListSchema,
    plan_ids: idListSchema,
    price_ids: idListSchema,
    meter_ids: idListSchema,
    // catalog prices never end (end_date stays null), so there is no expired price to include or leave out
    allow_expired_prices: { type: 'boolean' },
  },
} as const

const bulkBody = bulkBodyOf(createPriceBody)

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

  app.post('/prices/bulk', { schema: { response: { 201: itemsOf(ref('Price')) }, tags: ['prices'], body: bulkBody } }, async (request, reply) => {
    const prices = await createPrices(em(), scopeOf(request), request.auth.userId, request.body.items)
    return reply.code(201).send({ items: prices.map(serializePrice) })
  })

  app.post('/prices/search', { config: READS, schema: { response: { 200: pageOf(ref('Price')) }, tags: ['prices'], body: searchBody } }, async (request) => {
    const filter = request.body
    const { items, total } = await listPrices(em(), scopeOf(request), filter)
    return listResponse(items.map(serializePrice), total, filter)
  })

  app.get('/prices/lookup/:lookup_key', { schema: { response: { 200: ref('Price') }, tags: ['prices'], params: lookupKeyParams } }, async (request) => {
    return serializePrice(await getPriceByLookupKey(em(), scopeOf(request), request.params.lookup_key))
  })

  app.get('/prices/:id', { schema: { response: { 200: ref('Price') }, tags: ['prices'], params: idParams } }, async (request) => {
    return serializePrice(await getPrice(em(), scopeOf(request), id(request.params)))
  })

  app.put('/prices/:id', { schema: { response: { 200: ref('Price') }, tags: ['prices'], params: idParams, body: updatePriceBody } }, async (request) => {
    return serializePrice(await updatePrice(em(), scopeOf(request), request.auth.userId, id(request.params), request.body))
  })

  app.delete('/prices/:id', { schema: { response: { 200: deletedMessage }, tags: ['prices'], params: idParams } }, async (request) => {
    await archivePrice(em(), scopeOf(request), request.auth.userId, id(request.params))
    return { message: `${id(request.params)} deleted` }
  })
}
