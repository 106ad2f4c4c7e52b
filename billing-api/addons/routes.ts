import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { descriptionSchema, lookupKeySchema, nameSchema, nullable } from '../http/catalog-schemas.js'
import { metadataSchema, paginationQuery, type Page } from '../http/schemas.js'
import { priceInputSchema } from '../plans/index.js'
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
  })
}
