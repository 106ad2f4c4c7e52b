import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { lookupKeySchema, nameSchema, refIdSchema } from '../http/catalog-schemas.js'
import { metadataSchema, paginationQuery } from '../http/schemas.js'
import { GROUP_ENTITY_TYPES, type Group } from './group.entity.js'
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
  registerCrudRoutes<Group, CreateGroupInput, UpdateGroupInput, GroupFilter>(app, ctx, {
    path: '/groups',
    schema: 'Group',
    tags,
    serialize: serializeGroup,
    create: { body: createBody, run: createGroup },
    list: { query: listQuery, run: listGroups },
    get: getGroup,
    update: { body: updateBody, run: updateGroup },
    archive: deleteGroup,
  })
}
