import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { descriptionSchema, lookupKeySchema, nameSchema, nullable } from '../features/catalog-schemas.js'
import { idParams, listResponse, metadataSchema, paginationQuery, type Page } from '../http/schemas.js'
import { priceInputSchema } from '../plans/routes.js'
import { serializeAddon } from './serialize.js'
import { archiveAddon, createAddon, getAddon, listAddons, updateAddon, type AddonView, type CreateAddonInput, type UpdateAddonInput } from './service.js'

const createBody = {
  type: 'object',
  required: ['name', 'lookup_key'],
  additionalProperties: false,
  properties: {
    name: nameSchema,
    lookup_key: lookupKeySchema,
    description: descriptionSchema,
    prices: { type: 'array', maxItems: 100, items: priceInputSchema },
    metadata: metadataSchema,
  },
} as const

const updateBody = {
  type: 'object',
  additionalProperties: false,
  properties: { name: nameSchema, description: nullable(descriptionSchema), metadata: metadataSchema },
} as const

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQuery, lookup_key: { type: 'string', minLength: 1 } },
} as const

const tags = ['addons']
const toResponse = (v: AddonView) => serializeAddon(v.addon, v.prices, v.entitlements)

export async function addonRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {

  app.post('/addons', { schema: { tags, body: createBody } }, async (request, reply) => {
    const view = await createAddon(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body as CreateAddonInput)
    return reply.code(201).send(toResponse(view))
  })

  app.get('/addons', { schema: { tags, querystring: listQuery } }, async (request) => {
    const q = request.query as Page & { lookup_key?: string }
    const { items, total } = await listAddons(ctx.orm.em.fork(), scopeOf(request), q)
    return listResponse(items.map(toResponse), total, q)
  })

  app.get('/addons/:id', { schema: { tags, params: idParams } }, async (request) => {
    return toResponse(await getAddon(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id))
  })

  app.put('/addons/:id', { schema: { tags, params: idParams, body: updateBody } }, async (request) => {
    const { id } = request.params as { id: string }
    return toResponse(await updateAddon(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, id, request.body as UpdateAddonInput))
  })

  app.delete('/addons/:id', { schema: { tags, params: idParams } }, async (request, reply) => {
    await archiveAddon(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, (request.params as { id: string }).id)
    return reply.code(204).send()
  })
}
