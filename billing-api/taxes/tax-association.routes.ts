import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { serializeBase, pick } from '../db/common.js'
import { metadataSchema, paginationQuery } from '../http/schemas.js'
import { TAX_ENTITY_TYPES, type TaxAssociation } from './tax-association.entity.js'
import {
  createTaxAssociation, deleteTaxAssociation, getTaxAssociation, listTaxAssociations, updateTaxAssociation,
  type CreateTaxAssociationInput, type TaxAssociationFilter, type UpdateTaxAssociationInput,
} from './tax-association.service.js'

export function serializeTaxAssociation(a: TaxAssociation) {
  return {
    ...serializeBase(a),
    ...pick(a, ['tax_rate_id', 'entity_type', 'entity_id', 'priority', 'auto_apply']),
    currency: null,
    tax_rate: null,
  }
}

const id = { type: 'string', minLength: 1, maxLength: 100 } as const

const createBody = {
  type: 'object',
  required: ['entity_type', 'entity_id'],
  additionalProperties: false,
  properties: {
    tax_rate_id: id,
    tax_rate_code: { type: 'string', minLength: 1, maxLength: 255 },
    entity_type: { type: 'string', enum: TAX_ENTITY_TYPES },
    entity_id: id,
    priority: { type: 'integer', minimum: 0, maximum: 1000000 },
    auto_apply: { type: 'boolean' },
    metadata: metadataSchema,
  },
} as const

const updateBody = {
  type: 'object',
  additionalProperties: false,
  properties: { priority: createBody.properties.priority, auto_apply: { type: 'boolean' }, metadata: metadataSchema },
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
  registerCrudRoutes<TaxAssociation, CreateTaxAssociationInput, UpdateTaxAssociationInput, TaxAssociationFilter>(app, ctx, {
    path: '/taxes/associations',
    schema: 'TaxAssociation',
    tags: ['taxes'],
    serialize: serializeTaxAssociation,
    create: { body: createBody, run: createTaxAssociation },
    list: { query: listQuery, run: listTaxAssociations },
    get: getTaxAssociation,
    update: { body: updateBody, run: updateTaxAssociation },
    archive: deleteTaxAssociation,
    created: 200,
    archived: 'record',
  })
}
