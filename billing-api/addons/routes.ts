import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { descriptionSchema, lookupKeyParams, lookupKeySchema, nameSchema, nullable } from '../http/catalog-schemas.js'
import { scopeOf } from '../http/request-auth.js'
import { typed } from '../http/typed-routes.js'
import { ref } from '../http/response-schemas.js'
import { metadataSchema, paginationQuery, type Page } from '../http/schemas.js'
import { priceInputSchema } from '../plans/index.js'
import { serializeAddon } from './serialize.js'
import { archiveAddon, createAddon, getAddon, getAddonByLookupKey, listAddons, updateAddon, type AddonView, type CreateAddonInput, type UpdateAddonInput } from './service.js'

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
    // An add-on attaches at most once per subscription (subscriptions/addon-attach.ts): Flexprice's
    // onetime type. Its multiple_instance type is refused.
    type: { type: 'string', enum: ['onetime'] },
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
  registerCrudRoutes<AddonView, CreateAddonInput, UpdateAddonInput, Page & { lookup_key?: string }>(app, ctx, {
    path: '/addons',
    schema: 'Addon',
    tags,
    serialize: toResponse,
    create: { body: createBody, run: createAddon },
    list: { query: listQuery, run: listAddons },
    get: getAddon,
    update: { body: updateBody, run: updateAddon },
    archive: archiveAddon,
    archived: 'message',
  })
  typed(app).get('/addons/lookup/:lookup_key', { schema: { response: { 200: ref('Addon') }, tags, params: lookupKeyParams } }, async (request) => {
    return toResponse(await getAddonByLookupKey(ctx.orm.em.fork(), scopeOf(request), request.params.lookup_key))
  })
}
