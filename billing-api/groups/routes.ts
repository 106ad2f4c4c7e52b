import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { lookupKeySchema, nameSchema, refIdSchema } from '../features/catalog-schemas.js'
import { idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { GROUP_ENTITY_TYPES } from './group.entity.js'
import { serializeGroup } from './serialize.js'
import { createGroup, deleteGroup, getGroup, listGroups, updateGroup, type CreateGroupInput, type GroupFilter, type UpdateGroupInput } from './service.js'

const entityIds = { type: 'array', maxItems: 500, uniqueItems: true, items: refIdSchema } as const

const createBody = {
  type: 'object',
  required: ['name', 'entity_type'],
  additionalProperties: false,
  properties: {
    name: nameSchema,
    entity_type: { type: 'string', enum: GROUP_ENTITY_TYPES },
    lookup_key: lookupKeySchema,
    entity_ids: entityIds,
    metadata: metadataSchema,
  },
} as const

const updateBody = {
  type: 'object',
  additionalProperties: false,
  properties: { name: nameSchema, entity_ids: entityIds, metadata: metadataSchema },
} as const

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQuery, entity_type: { type: 'string', enum: GROUP_ENTITY_TYPES }, lookup_key: { type: 'string', minLength: 1 } },
} as const

const tags = ['groups']

export async function groupRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {

  app.post('/groups', { schema: { tags, body: createBody } }, async (request, reply) => {
    const group = await createGroup(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body as CreateGroupInput)
    return reply.code(201).send(serializeGroup(group))
  })

  app.get('/groups', { schema: { tags, querystring: listQuery } }, async (request) => {
    const q = request.query as GroupFilter
    const { items, total } = await listGroups(ctx.orm.em.fork(), scopeOf(request), q)
    return listResponse(items.map(serializeGroup), total, q)
  })

  app.get('/groups/:id', { schema: { tags, params: idParams } }, async (request) => {
    return serializeGroup(await getGroup(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id))
  })

  app.put('/groups/:id', { schema: { tags, params: idParams, body: updateBody } }, async (request) => {
    const { id } = request.params as { id: string }
    return serializeGroup(await updateGroup(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, id, request.body as UpdateGroupInput))
  })

  app.delete('/groups/:id', { schema: { tags, params: idParams } }, async (request, reply) => {
    await deleteGroup(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, (request.params as { id: string }).id)
    return reply.code(204).send()
  })
}
