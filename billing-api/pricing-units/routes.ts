import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { serializeBase } from '../db/common.js'
import { RECORD_STATUSES } from '../http/metadata-filter.js'
import { metadataSchema, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
import type { PricingUnit } from './pricing-unit.entity.js'
import {
  archivePricingUnit, createPricingUnit, getPricingUnit, listPricingUnits, updatePricingUnit,
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

export async function pricingUnitRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  registerCrudRoutes<PricingUnit, PricingUnitInput, PricingUnitUpdate, PricingUnitFilter>(app, ctx, {
    path: '/pricing-units',
    schema: 'PricingUnit',
    tags: ['pricing-units'],
    serialize: serializePricingUnit,
    create: { body: createBody, run: createPricingUnit },
    list: { query: listQuery, run: listPricingUnits },
    get: getPricingUnit,
    update: { body: { type: 'object', additionalProperties: false, properties: mutableFields }, run: updatePricingUnit },
    archive: archivePricingUnit,
  })
}
