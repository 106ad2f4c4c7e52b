import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { serializeBase } from '../db/common.js'
import { idParams, listResponse, metadataSchema, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
import type { TaxRate } from './tax-rate.entity.js'
import {
  createTaxRate, deleteTaxRate, getTaxRate, listTaxRates, updateTaxRate,
  type CreateTaxRateInput, type TaxRateFilter, type UpdateTaxRateInput,
} from './tax-rate.service.js'

export function serializeTaxRate(r: TaxRate) {
  return {
    ...serializeBase(r),
    name: r.name,
    code: r.code,
    description: r.description,
    percentage_value: r.percentage_value,
    fixed_value: r.fixed_value,
    currency: r.currency,
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
  const tags = ['taxes']

  app.post('/taxes/rates', { schema: { tags, body: createBody } }, async (request, reply) => {
    const rate = await createTaxRate(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body as CreateTaxRateInput)
    return reply.code(201).send(serializeTaxRate(rate))
  })

  app.get('/taxes/rates', { schema: { tags, querystring: listQuery } }, async (request) => {
    const filter = request.query as TaxRateFilter
    const [items, total] = await listTaxRates(ctx.orm.em.fork(), scopeOf(request), filter)
    return listResponse(items.map(serializeTaxRate), total, filter)
  })

  app.get('/taxes/rates/:id', { schema: { tags, params: idParams } }, async (request) => {
    return serializeTaxRate(await getTaxRate(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id))
  })

  app.put('/taxes/rates/:id', { schema: { tags, params: idParams, body: updateBody } }, async (request) => {
    const id = (request.params as { id: string }).id
    const rate = await updateTaxRate(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, id, request.body as UpdateTaxRateInput)
    return serializeTaxRate(rate)
  })

  app.delete('/taxes/rates/:id', { schema: { tags, params: idParams } }, async (request, reply) => {
    await deleteTaxRate(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, (request.params as { id: string }).id)
    return reply.code(204).send()
  })
}
