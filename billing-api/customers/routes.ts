import type { FastifyInstance } from 'fastify'
import { ValidationError } from '../../platform/errors.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { searchBodyProperties } from '../http/metadata-filter.js'
import { addressProperties, idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { serializeCustomer } from './serialize.js'
import { createCustomer, customerIdByExternalId, deleteCustomer, getCustomer, searchCustomers, updateCustomer, type CustomerView } from './service.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { noContent, pageOf, ref } from '../http/response-schemas.js'

const customerFields = {
  external_id: { type: 'string', minLength: 1, maxLength: 255 },
  name: { type: 'string', maxLength: 255 },
  email: { type: 'string', format: 'email', maxLength: 255 },
  ...addressProperties,
  metadata: metadataSchema,
} as const

const createBody = { type: 'object', required: ['external_id'], additionalProperties: false, properties: customerFields } as const
const updateBody = { type: 'object', additionalProperties: false, properties: customerFields } as const
const searchBody = {
  type: 'object',
  additionalProperties: false,
  properties: { ...searchBodyProperties, external_id: { type: 'string' }, email: { type: 'string' } },
} as const

const externalIdParams = { type: 'object', required: ['external_id'], properties: { external_id: { type: 'string', minLength: 1, maxLength: 255 } } } as const
/** PUT /customers (Flexprice's form): the customer by id or by external id, exactly one. */
const whichCustomer = {
  type: 'object',
  additionalProperties: false,
  properties: { id: { type: 'string', minLength: 1, maxLength: 100 }, external_customer_id: externalIdParams.properties.external_id },
} as const

const toResponse = (v: CustomerView) => serializeCustomer(v.customer, v.integrations)

export async function customerRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const em = () => ctx.orm.em.fork()
  const id = (params: unknown) => (params as { id: string }).id

  app.post('/customers', { schema: { response: { 201: ref('Customer') }, tags: ['customers'], body: createBody } }, async (request, reply) => {
    const view = await createCustomer(em(), scopeOf(request), request.auth.userId, request.body)
    return reply.code(201).send(toResponse(view))
  })

  app.post('/customers/search', { config: READS, schema: { response: { 200: pageOf(ref('Customer')) }, tags: ['customers'], body: searchBody } }, async (request) => {
    const search = request.body
    const { items, total } = await searchCustomers(em(), scopeOf(request), search)
    return listResponse(items.map(toResponse), total, search)
  })

  app.get(
    '/customers',
    { schema: { response: { 200: pageOf(ref('Customer')) }, tags: ['customers'], querystring: { type: 'object', properties: { ...paginationQuery, external_id: { type: 'string' } } } } },
    async (request) => {
      const q = request.query
      const { items, total } = await searchCustomers(em(), scopeOf(request), q)
      return listResponse(items.map(toResponse), total, q)
    },
  )

  app.get('/customers/:id', { schema: { response: { 200: ref('Customer') }, tags: ['customers'], params: idParams } }, async (request) => {
    return toResponse(await getCustomer(em(), scopeOf(request), id(request.params)))
  })

  app.put('/customers/:id', { schema: { response: { 200: ref('Customer') }, tags: ['customers'], params: idParams, body: updateBody } }, async (request) => {
    return toResponse(await updateCustomer(em(), scopeOf(request), request.auth.userId, id(request.params), request.body))
  })

  app.get('/customers/external/:external_id', { schema: { response: { 200: ref('Customer') }, tags: ['customers'], params: externalIdParams } }, async (request) => {
    const scope = scopeOf(request)
    return toResponse(await getCustomer(em(), scope, await customerIdByExternalId(em(), scope, request.params.external_id)))
  })

  app.put('/customers', { schema: { response: { 200: ref('Customer') }, tags: ['customers'], querystring: whichCustomer, body: updateBody } }, async (request) => {
    const scope = scopeOf(request)
    const { id: byId, external_customer_id: byExternalId } = request.query
    if ((byId === undefined) === (byExternalId === undefined)) throw new ValidationError('id: give exactly one of id and external_customer_id', 'id')
    const customerId = byId ?? (await customerIdByExternalId(em(), scope, byExternalId!))
    return toResponse(await updateCustomer(em(), scope, request.auth.userId, customerId, request.body))
  })

  app.delete('/customers/:id', { schema: { response: { 204: noContent }, tags: ['customers'], params: idParams } }, async (request, reply) => {
    await deleteCustomer(em(), scopeOf(request), request.auth.userId, id(request.params))
    return reply.code(204).send()
  })
}
