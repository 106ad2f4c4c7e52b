import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { serializeBase } from '../db/common.js'
import { RECORD_STATUSES } from '../http/metadata-filter.js'
import { idParams, listResponse, metadataSchema, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
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
  const em = () => ctx.orm.em.fork()
  const id = (params: unknown) => (params as { id: string }).id

  app.post('/pricing-units', { schema: { tags: ['pricing-units'], body: createBody } }, async (request, reply) => {
    const unit = await createPricingUnit(em(), scopeOf(request), request.auth.userId, request.body as PricingUnitInput)
    return reply.code(201).send(serializePricingUnit(unit))
  })

  app.get('/pricing-units', { schema: { tags: ['pricing-units'], querystring: listQuery } }, async (request) => {
    const q = request.query as PricingUnitFilter
    const { items, total } = await listPricingUnits(em(), scopeOf(request), q)
    return listResponse(items.map(serializePricingUnit), total, q)
  })

  app.get('/pricing-units/:id', { schema: { tags: ['pricing-units'], params: idParams } }, async (request) => {
    return serializePricingUnit(await getPricingUnit(em(), scopeOf(request), id(request.params)))
  })

  app.put(
    '/pricing-units/:id',
    { schema: { tags: ['pricing-units'], params: idParams, body: { type: 'object', additionalProperties: false, properties: mutableFields } } },
    async (request) => {
      const unit = await updatePricingUnit(em(), scopeOf(request), request.auth.userId, id(request.params), request.body as PricingUnitUpdate)
      return serializePricingUnit(unit)
    },
  )

  app.delete('/pricing-units/:id', { schema: { tags: ['pricing-units'], params: idParams } }, async (request, reply) => {
    await archivePricingUnit(em(), scopeOf(request), request.auth.userId, id(request.params))
    return reply.code(204).send()
  })
}
