import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { serializeBase, pick } from '../db/common.js'
import { metadataSchema, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
import type { TaxRate } from './tax-rate.entity.js'
import {
  createTaxRate, deleteTaxRate, getTaxRate, listTaxRates, updateTaxRate,
  type CreateTaxRateInput, type TaxRateFilter, type UpdateTaxRateInput,
} from './tax-rate.service.js'
import { TAX_RATE_TYPES, taxRateType } from './tax-rate-value.js'

export function serializeTaxRate(r: TaxRate) {
  return {
    ...serializeBase(r),
    ...pick(r, ['name', 'code', 'description', 'percentage_value', 'fixed_value', 'currency']),
    tax_rate_type: taxRateType(r),
    tax_rate_status: r.status === 'published' ? 'ACTIVE' : 'INACTIVE',
    scope: null,
  }
}

const name = { type: 'string', minLength: 1, maxLength: 255 } as const
const code = { type: 'string', minLength: 1, maxLength: 255 } as const
const LISTED_STATUSES = ['published', 'archived'] as const

// percentage_value XOR fixed_value, and currency exactly with fixed_value, are checked in
// tax-rate-value.ts so that each failure names its field.
const createBody = {
  type: 'object',
  required: ['name', 'code'],
  additionalProperties: false,
  properties: {
    name,
    code,
    description: { type: 'string', maxLength: 2000 },
    percentage_value: nonNegativeDecimalString,
    fixed_value: nonNegativeDecimalString,
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    metadata: metadataSchema,
    tax_rate_type: { type: 'string', enum: TAX_RATE_TYPES },
  },
} as const

const updateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name,
    code,
    description: { type: ['string', 'null'], maxLength: 2000 },
    status: { type: 'string', enum: LISTED_STATUSES },
    metadata: metadataSchema,
  },
} as const

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQuery,
    status: { type: 'string', enum: LISTED_STATUSES, default: 'published' },
    code: { type: 'string', minLength: 1, maxLength: 255 },
  },
} as const

export async function taxRateRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  registerCrudRoutes<TaxRate, CreateTaxRateInput, UpdateTaxRateInput, TaxRateFilter>(app, ctx, {
    path: '/taxes/rates',
    schema: 'TaxRate',
    tags: ['taxes'],
    serialize: serializeTaxRate,
    create: { body: createBody, run: createTaxRate },
    list: { query: listQuery, run: listTaxRates },
    get: getTaxRate,
    update: { body: updateBody, run: updateTaxRate },
    archive: deleteTaxRate,
  })
}
