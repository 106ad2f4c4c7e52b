// Flexprice's paths for provider connections (/secrets/integrations/...) and entity mappings
// (/entity-integration-mappings), served beside the spec's own (/integrations/connections,
// POST /integrations/link) by the same use cases. A connection is Flexprice's "integration
// secret": its credentials are stored encrypted and only their obscured hint is answered.
// "Create or update": an environment has one connection per provider, and a second create is
// refused with 409 (delete the connection first), as on the spec's route.
import type { FastifyInstance } from 'fastify'
import { NotFoundError, ValidationError } from '../../platform/errors.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { iso } from '../db/common.js'
import { idParams, metadataSchema } from '../http/schemas.js'
import { typed } from '../http/typed-routes.js'
import { noContent, ref } from '../http/response-schemas.js'
import { createConnection, deleteConnection } from './connections.js'
import { EntityIntegrationMappingSchema, IntegrationConnectionSchema, type IntegrationConnection } from './entities.js'
import { linkEntity, MAPPED_ENTITY_TYPES, serializeMapping } from './mappings.js'
import { PROVIDER_TYPES } from './providers.js'
import { linkedProvidersSchema } from './response-schemas.js'

const secret = { type: 'string', minLength: 1, maxLength: 500 } as const
const provider = { type: 'string', enum: [...PROVIDER_TYPES] } as const
const id = { type: 'string', minLength: 1, maxLength: 200 } as const
const providerParams = { type: 'object', required: ['provider'], properties: { provider } } as const

const createBody = {
  type: 'object',
  required: ['provider', 'name', 'credentials'],
  additionalProperties: false,
  properties: {
    provider,
    name: { type: 'string', minLength: 1, maxLength: 255 },
    credentials: { type: 'object', required: ['api_key', 'webhook_secret'], additionalProperties: false, properties: { api_key: secret, webhook_secret: secret } },
  },
} as const

const mappingBody = {
  type: 'object',
  required: ['entity_type', 'entity_id', 'provider_type', 'provider_entity_id'],
  additionalProperties: false,
  properties: {
    entity_type: { type: 'string', enum: MAPPED_ENTITY_TYPES }, entity_id: id, provider_type: provider, provider_entity_id: id, metadata: metadataSchema,
  },
} as const

/** A connection in Flexprice's secret shape; display_id is the obscured API key. */
export const serializeIntegrationSecret = (c: IntegrationConnection) => ({
  id: c.id, name: c.name, provider: c.provider, type: 'integration', status: c.status, display_id: c.credentials_hint.api_key ?? null,
  roles: [], user_type: null, expires_at: null, last_used_at: null, created_at: iso(c.created_at), updated_at: iso(c.updated_at),
})

export async function flexpriceIntegrationRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const tags = ['integrations']
  const em = () => ctx.orm.em.fork()

  app.post('/secrets/integrations/create/:provider', { schema: { response: { 201: ref('IntegrationSecret') }, tags, params: providerParams, body: createBody } }, async (request, reply) => {
    if (request.body.provider !== request.params.provider) throw new ValidationError(`provider must be the path's (${request.params.provider})`, 'provider')
    const c = await createConnection(ctx.config, em(), scopeOf(request), request.body, request.auth.userId)
    return reply.code(201).send(serializeIntegrationSecret(c))
  })

  app.get('/secrets/integrations/by-provider/:provider', { schema: { response: { 200: ref('IntegrationSecret') }, tags, params: providerParams } }, async (request) => {
    const c = await em().findOne(IntegrationConnectionSchema, { ...scopeOf(request), provider: request.params.provider, status: 'published' })
    if (!c) throw new NotFoundError(`${request.params.provider} integration`, 'of this environment')
    return serializeIntegrationSecret(c)
  })

  app.get('/secrets/integrations/linked', { schema: { response: { 200: linkedProvidersSchema }, tags } }, async (request) => {
    const connections = await em().find(IntegrationConnectionSchema, { ...scopeOf(request), status: 'published' }, { orderBy: { provider: 'asc' } })
    return { providers: connections.map((c) => c.provider) }
  })

  app.delete('/secrets/integrations/:id', { schema: { response: { 204: noContent }, tags, params: idParams } }, async (request, reply) => {
    await deleteConnection(em(), scopeOf(request), request.params.id, request.auth.userId)
    return reply.code(204).send()
  })

  app.post('/entity-integration-mappings', { schema: { response: { 201: ref('EntityIntegrationMapping') }, tags, body: mappingBody } }, async (request, reply) => {
    const { entity_type, entity_id, provider_type, provider_entity_id, metadata } = request.body
    if (metadata !== undefined) throw new ValidationError('metadata is not kept on a mapping', 'metadata')
    const m = await linkEntity(em(), scopeOf(request), { entity_type, entity_id, provider: provider_type, provider_entity_id }, request.auth.userId)
    return reply.code(201).send(serializeMapping(m))
  })

  app.get('/entity-integration-mappings/:id', { schema: { response: { 200: ref('EntityIntegrationMapping') }, tags, params: idParams } }, async (request) => {
    const m = await em().findOne(EntityIntegrationMappingSchema, { id: request.params.id, ...scopeOf(request), status: 'published' })
    if (!m) throw new NotFoundError('entity integration mapping', request.params.id)
    return serializeMapping(m)
  })

  app.delete('/entity-integration-mappings/:id', { schema: { response: { 204: noContent }, tags, params: idParams } }, async (request, reply) => {
    const updated = await em().nativeUpdate(EntityIntegrationMappingSchema, { id: request.params.id, ...scopeOf(request), status: 'published' }, { status: 'deleted', updated_by: request.auth.userId })
    if (!updated) throw new NotFoundError('entity integration mapping', request.params.id)
    return reply.code(204).send()
  })
}
