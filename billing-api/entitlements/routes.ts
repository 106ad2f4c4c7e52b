import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { nullable, refIdSchema } from '../http/catalog-schemas.js'
import { bulkBodyOf, dateTime, idListSchema, idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { ENTITLEMENT_ENTITY_TYPES, USAGE_RESET_PERIODS } from './entitlement.entity.js'
import { serializeEntitlement } from './read.js'
import { createEntitlement, createEntitlements, deleteEntitlement, listAddonEntitlements, getEntitlement, listEntitlementPage, updateEntitlement, type EntitlementWithFeature } from './service.js'
import { typed } from '../http/typed-routes.js'
import { FEATURE_TYPES } from '../features/feature.entity.js'
import { deletedMessage, itemsOf, pageOf, ref } from '../http/response-schemas.js'
import { READS } from '../http/route-access.js'
import { customerEntitlements, subscriptionEntitlements } from './aggregated.js'
import { customerEntitlementsSchema, subscriptionEntitlementsSchema } from './response-schemas.js'

// Which of these a feature type takes is checked in entitlement-rules.ts.
const values = {
  is_enabled: { type: 'boolean' },
  usage_limit: { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
  is_soft_limit: { type: 'boolean' },
  static_value: nullable({ type: 'string', minLength: 1, maxLength: 1000 }),
  usage_reset_period: { type: ['string', 'null'], enum: [...USAGE_RESET_PERIODS, null] },
  display_order: { type: 'integer', minimum: -1_000_000, maximum: 1_000_000 },
  start_date: nullable(dateTime),
  end_date: nullable(dateTime),
  metadata: metadataSchema,
} as const

const entityType = { type: 'string', enum: ENTITLEMENT_ENTITY_TYPES } as const

const createBody = {
  type: 'object',
  required: ['entity_type', 'entity_id', 'feature_id'],
  additionalProperties: false,
  properties: { entity_type: entityType, entity_id: refIdSchema, feature_id: refIdSchema, feature_type: { type: 'string', enum: FEATURE_TYPES }, ...values },
} as const

// What is granted, and to whom, is fixed: delete the entitlement and create another instead.
const updateBody = { type: 'object', additionalProperties: false, properties: values } as const

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQuery, entity_type: entityType, entity_id: refIdSchema, feature_id: refIdSchema },
} as const

/** The list's filters as a JSON body, in the form Flexprice's SDK sends them. */
const searchBody = {
  type: 'object',
  additionalProperties: false,
  properties: { ...listQuery.properties, entity_ids: idListSchema, plan_ids: idListSchema, feature_ids: idListSchema },
} as const

const bulkBody = bulkBodyOf(createBody)

const pageQuery = { type: 'object', additionalProperties: false, properties: paginationQuery } as const

const tags = ['entitlements']
const toResponse = (r: EntitlementWithFeature) => serializeEntitlement(r.entitlement, r.feature)

export async function entitlementRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)

  app.post('/entitlements', { schema: { response: { 201: ref('Entitlement') }, tags, body: createBody } }, async (request, reply) => {
    const created = await createEntitlement(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body)
    return reply.code(201).send(toResponse(created))
  })

  app.get('/entitlements', { schema: { response: { 200: pageOf(ref('Entitlement')) }, tags, querystring: listQuery } }, async (request) => {
    const q = request.query
    const { items, total } = await listEntitlementPage(ctx.orm.em.fork(), scopeOf(request), q)
    return listResponse(items, total, q)
  })

  app.post('/entitlements/search', { config: READS, schema: { response: { 200: pageOf(ref('Entitlement')) }, tags, body: searchBody } }, async (request) => {
    const filter = request.body
    const { items, total } = await listEntitlementPage(ctx.orm.em.fork(), scopeOf(request), filter)
    return listResponse(items, total, filter)
  })

  app.post('/entitlements/bulk', { schema: { response: { 201: itemsOf(ref('Entitlement')) }, tags, body: bulkBody } }, async (request, reply) => {
    const created = await createEntitlements(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body.items)
    return reply.code(201).send({ items: created.map(toResponse) })
  })

  app.get('/addons/:id/entitlements', { schema: { response: { 200: pageOf(ref('Entitlement')) }, tags, params: idParams, querystring: pageQuery } }, async (request) => {
    const q = request.query
    const { items, total } = await listAddonEntitlements(ctx.orm.em.fork(), scopeOf(request), request.params.id, q)
    return listResponse(items, total, q)
  })

  app.get('/customers/:id/entitlements', { schema: { response: { 200: customerEntitlementsSchema }, tags, params: idParams } }, async (request) => {
    return customerEntitlements(ctx.orm.em.fork(), ctx.clock, scopeOf(request), request.params.id)
  })

  app.get('/subscriptions/:id/entitlements', { schema: { response: { 200: subscriptionEntitlementsSchema }, tags, params: idParams } }, async (request) => {
    return subscriptionEntitlements(ctx.orm.em.fork(), ctx.clock, scopeOf(request), request.params.id)
  })

  app.get('/entitlements/:id', { schema: { response: { 200: ref('Entitlement') }, tags, params: idParams } }, async (request) => {
    return toResponse(await getEntitlement(ctx.orm.em.fork(), scopeOf(request), request.params.id))
  })

  app.put('/entitlements/:id', { schema: { response: { 200: ref('Entitlement') }, tags, params: idParams, body: updateBody } }, async (request) => {
    const { id } = request.params
    return toResponse(await updateEntitlement(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, id, request.body))
  })

  app.delete('/entitlements/:id', { schema: { response: { 200: deletedMessage }, tags, params: idParams } }, async (request) => {
    await deleteEntitlement(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.params.id)
    return { message: `${request.params.id} deleted` }
  })
}
