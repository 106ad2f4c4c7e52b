// /v1/integrations: connections (credentials write-only), link, and the on-demand sync
// (POST /v1/integrations/sync; the spec does not show this path).
import type { FastifyInstance } from 'fastify'
import { NotFoundError } from '../../platform/errors.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { createConnection, deleteConnection, serializeConnection } from './connections.js'
import { IntegrationConnectionSchema } from './entities.js'
import { linkEntity, MAPPED_ENTITY_TYPES, serializeMapping } from './mappings.js'
import { PROVIDER_TYPES } from './providers.js'
import { syncEntity } from './sync.js'
import { typed } from '../http/typed-routes.js'
import { noContent, pageOf, ref } from '../http/response-schemas.js'
import { syncResultSchema } from './response-schemas.js'

const secret = { type: 'string', minLength: 1, maxLength: 500 } as const
const providerField = { type: 'string', enum: [...PROVIDER_TYPES] } as const
const entityType = { type: 'string', enum: MAPPED_ENTITY_TYPES } as const
const id = { type: 'string', minLength: 1, maxLength: 200 } as const

export async function integrationRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const tags = ['integrations']

  app.post(
    '/integrations/connections',
    {
      schema: {
        response: { 201: ref('IntegrationConnection') },
        tags,
        body: {
          type: 'object',
          required: ['provider', 'name', 'credentials'],
          additionalProperties: false,
          properties: {
            provider: providerField,
            name: { type: 'string', minLength: 1, maxLength: 255 },
            credentials: {
              type: 'object', required: ['api_key', 'webhook_secret'], additionalProperties: false,
              properties: { api_key: secret, webhook_secret: secret },
            },
            settings: {
              type: 'object', additionalProperties: false,
              properties: {
                base_url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 2048 },
                integration_events: {
                  type: 'object', additionalProperties: false,
                  properties: { rate_limit_per_second: { type: 'integer', minimum: 1, maximum: 10_000 } },
                },
              },
            },
            metadata: metadataSchema,
          },
        },
      },
    },
    async (request, reply) => {
      const c = await createConnection(ctx.config, ctx.orm.em.fork(), scopeOf(request), request.body, request.auth.userId)
      return reply.code(201).send(serializeConnection(c))
    },
  )

  app.get('/integrations/connections', { schema: { response: { 200: pageOf(ref('IntegrationConnection')) }, tags, querystring: { type: 'object', properties: paginationQuery } } }, async (request) => {
    const q = request.query
    const [items, total] = await ctx.orm.em.fork().findAndCount(IntegrationConnectionSchema, { ...scopeOf(request), status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
    return listResponse(items.map(serializeConnection), total, q)
  })

  app.get('/integrations/connections/:id', { schema: { response: { 200: ref('IntegrationConnection') }, tags, params: idParams } }, async (request) => {
    const { id: cid } = request.params
    const c = await ctx.orm.em.fork().findOne(IntegrationConnectionSchema, { id: cid, ...scopeOf(request), status: 'published' })
    if (!c) throw new NotFoundError('integration connection', cid)
    return serializeConnection(c)
  })

  app.delete('/integrations/connections/:id', { schema: { response: { 204: noContent }, tags, params: idParams } }, async (request, reply) => {
    await deleteConnection(ctx.orm.em.fork(), scopeOf(request), request.params.id, request.auth.userId)
    return reply.code(204).send()
  })

  app.post(
    '/integrations/link',
    {
      schema: {
        response: { 201: ref('EntityIntegrationMapping') },
        tags,
        body: {
          type: 'object', required: ['entity_type', 'entity_id', 'provider', 'provider_entity_id'], additionalProperties: false,
          properties: { entity_type: entityType, entity_id: id, provider: providerField, provider_entity_id: id },
        },
      },
    },
    async (request, reply) => {
      const m = await linkEntity(ctx.orm.em.fork(), scopeOf(request), request.body, request.auth.userId)
      return reply.code(201).send(serializeMapping(m))
    },
  )

  app.post(
    '/integrations/sync',
    {
      schema: {
        response: { 200: syncResultSchema },
        tags,
        body: {
          type: 'object', required: ['entity_type', 'entity_id', 'provider', 'method'], additionalProperties: false,
          properties: { entity_type: entityType, entity_id: id, provider: providerField, method: { type: 'string', enum: ['push', 'pull'] } },
        },
      },
    },
    async (request) => syncEntity(ctx, scopeOf(request), request.body, request.auth.userId),
  )
}
