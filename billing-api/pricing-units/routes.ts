import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { scopeOf } from '../http/request-auth.js'
import { typed } from '../http/typed-routes.js'
import { ref } from '../http/response-schemas.js'
import { serializeBase } from '../db/common.js'
import { RECORD_STATUSES } from '../http/metadata-filter.js'
import { metadataSchema, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
import type { PricingUnit } from './pricing-unit.entity.js'
import {
  archivePricingUnit, createPricingUnit, getPricingUnit, getPricingUnitByCode, listPricingUnits, updatePricingUnit,
  type PricingUnitFilter, type PricingUnitInput, type PricingUnitUpdate,
} from './service.js'

export function serializePricingUnit(u: PricingUnit) {
  return { ...serializeBase(u), name: u.name, code: u.code, symbol: u.symbol, base_currency: u.base_currency, conversion_rate: u.conversion_rate }
}

const mutableFields = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  symbol: { type: 'string', minLength: 1, maxLength: 10 },
  conversion_rate: nonNegativeDecimalString,
  metadata: metadataSchema,
} as const

const createBody = {
  type: 'object',
  required: ['name', 'code', 'base_currency', 'conversion_rate'],
  additionalProperties: false,
  properties: {
    ...mutableFields,
    code: { type: 'string', minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9_.-]+$' },
    base_currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
  },
} as const

const listQuery = {
  type: 'object',
  properties: { ...paginationQuery, code: { type: 'string' }, status: { type: 'string', enum: RECORD_STATUSES, default: 'published' } },
} as const

const codeParams = { type: 'object', required: ['code'], properties: { code: { type: 'string', minLength: 1, maxLength: 50 } } } as const

// Served at /pricing-units and at /prices/units, the path Flexprice's SDK uses.
export async function pricingUnitRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  for (const path of ['/pricing-units', '/prices/units']) registerPricingUnitRoutes(app, ctx, path)
  typed(app).get('/prices/units/code/:code', { schema: { response: { 200: ref('PricingUnit') }, tags: ['pricing-units'], params: codeParams } }, async (request) => {
    return serializePricingUnit(await getPricingUnitByCode(ctx.orm.em.fork(), scopeOf(request), request.params.code))
  })
}

function registerPricingUnitRoutes(app: FastifyInstance, ctx: BillingContext, path: string): void {
  registerCrudRoutes<PricingUnit, PricingUnitInput, PricingUnitUpdate, PricingUnitFilter>(app, ctx, {
    path,
    schema: 'PricingUnit',
    tags: ['pricing-units'],
    serialize: serializePricingUnit,
    create: { body: createBody, run: createPricingUnit },
    list: { query: listQuery, run: listPricingUnits },
    get: getPricingUnit,
    update: { body: { type: 'object', additionalProperties: false, properties: mutableFields }, run: updatePricingUnit },
    archive: archivePricingUnit,
    archived: 'message',
  })
}
