import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { serializeBase } from '../db/common.js'
import { idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { TAX_ENTITY_TYPES, type TaxAssociation } from './tax-association.entity.js'
import {
  createTaxAssociation, deleteTaxAssociation, getTaxAssociation, listTaxAssociations,
  type CreateTaxAssociationInput, type TaxAssociationFilter,
} from './tax-association.service.js'

export function serializeTaxAssociation(a: TaxAssociation) {
  return {
    ...serializeBase(a),
    tax_rate_id: a.tax_rate_id,
    entity_type: a.entity_type,
    entity_id: a.entity_id,
    priority: a.priority,
    auto_apply: a.auto_apply,
  }
}

const id = { type: 'string', minLength: 1, maxLength: 100 } as const

const createBody = {
  type: 'object',
  required: ['tax_rate_id', 'entity_type', 'entity_id'],
  additionalProperties: false,
  properties: {
    tax_rate_id: id,
    entity_type: { type: 'string', enum: TAX_ENTITY_TYPES },
    entity_id: id,
    priority: { type: 'integer', minimum: 0, maximum: 1000000 },
    auto_apply: { type: 'boolean' },
    metadata: metadataSchema,
  },
} as const

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQuery,
    entity_type: { type: 'string', enum: TAX_ENTITY_TYPES },
    entity_id: id,
    tax_rate_id: id,
  },
} as const

export async function taxAssociationRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  const tags = ['taxes']

  app.post('/taxes/associations', { schema: { tags, body: createBody } }, async (request, reply) => {
    const association = await createTaxAssociation(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body as CreateTaxAssociationInput)
    return reply.code(201).send(serializeTaxAssociation(association))
  })

  app.get('/taxes/associations', { schema: { tags, querystring: listQuery } }, async (request) => {
    const filter = request.query as TaxAssociationFilter
    const [items, total] = await listTaxAssociations(ctx.orm.em.fork(), scopeOf(request), filter)
    return listResponse(items.map(serializeTaxAssociation), total, filter)
  })

  app.get('/taxes/associations/:id', { schema: { tags, params: idParams } }, async (request) => {
    return serializeTaxAssociation(await getTaxAssociation(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id))
  })

  app.delete('/taxes/associations/:id', { schema: { tags, params: idParams } }, async (request, reply) => {
    await deleteTaxAssociation(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, (request.params as { id: string }).id)
    return reply.code(204).send()
  })
}
