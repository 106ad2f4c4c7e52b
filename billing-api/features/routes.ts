import type { FastifyInstance } from 'fastify'
import type { BillingContext } from '../context.js'
import { registerCrudRoutes } from '../http/crud-routes.js'
import { metadataSchema, paginationQuery } from '../http/schemas.js'
import { descriptionSchema, lookupKeySchema, nameSchema, nullable, refIdSchema } from '../http/catalog-schemas.js'
import { FEATURE_TYPES, type Feature } from './feature.entity.js'
import { serializeFeature } from './serialize.js'
import { archiveFeature, createFeature, getFeature, listFeatures, updateFeature, type CreateFeatureInput, type FeatureFilter, type UpdateFeatureInput } from './service.js'

const unitName = { type: 'string', minLength: 1, maxLength: 100 } as const

const threshold = {
  type: ['object', 'null'],
  required: ['threshold'],
  additionalProperties: false,
  properties: { threshold: { type: 'integer', minimum: 0 } },
} as const

const alertSettings = {
  type: 'object',
  additionalProperties: false,
  properties: { alert_enabled: { type: 'boolean' }, critical: threshold, warning: threshold, info: threshold },
} as const

const reportingUnit = {
  type: 'object',
  required: ['conversion_rate', 'unit_singular', 'unit_plural'],
  additionalProperties: false,
  properties: { conversion_rate: { type: 'integer', minimum: 1 }, unit_singular: unitName, unit_plural: unitName },
} as const

const createBody = {
  type: 'object',
  required: ['name', 'type'],
  additionalProperties: false,
  properties: {
    name: nameSchema,
    type: { type: 'string', enum: FEATURE_TYPES },
    lookup_key: lookupKeySchema,
    description: descriptionSchema,
    meter_id: refIdSchema,
    group_id: refIdSchema,
    unit_singular: unitName,
    unit_plural: unitName,
    alert_settings: alertSettings,
    reporting_unit: reportingUnit,
    metadata: metadataSchema,
  },
} as const

// type, meter_id and lookup_key are fixed at creation: entitlements and clients depend on them.
const updateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    name: nameSchema,
    description: nullable(descriptionSchema),
    group_id: nullable(refIdSchema),
    unit_singular: nullable(unitName),
    unit_plural: nullable(unitName),
    alert_settings: nullable(alertSettings),
    reporting_unit: nullable(reportingUnit),
    metadata: metadataSchema,
  },
} as const

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...paginationQuery,
    type: { type: 'string', enum: FEATURE_TYPES },
    lookup_key: { type: 'string', minLength: 1 },
    meter_id: refIdSchema,
  },
} as const

const tags = ['features']

export async function featureRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  registerCrudRoutes<Feature, CreateFeatureInput, UpdateFeatureInput, FeatureFilter>(app, ctx, {
    path: '/features',
    schema: 'Feature',
    tags,
    serialize: serializeFeature,
    create: { body: createBody, run: createFeature },
    list: { query: listQuery, run: listFeatures },
    get: getFeature,
    update: { body: updateBody, run: updateFeature },
    archive: archiveFeature,
    archived: 'message',
  })
}
