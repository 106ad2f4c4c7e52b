import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { serializeBase, pick } from '../db/common.js'
import { dateTime, decimalString, idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { AGGREGATION_TYPES, BUCKET_SIZES, MeterSchema, ROUNDING_MODES, type Meter } from './meter.entity.js'
import { createMeter, getMeter, meterUsage } from './service.js'
import { updateMeter } from './update-meter.js'
import { EXPRESSION_MAX_LENGTH } from '../../schemas/meter-expression.js'
import { usageReader } from './usage-reader.js'
import { typed } from '../http/typed-routes.js'
import { retireRecord } from '../db/scoped-records.js'
import { READS } from '../http/route-access.js'
import { noContent, pageOf, ref } from '../http/response-schemas.js'
import { meterUsageSchema } from './response-schemas.js'

export function serializeMeter(m: Meter) {
  return {
    ...serializeBase(m),
    ...pick(m, ['name', 'event_name', 'aggregation', 'filters', 'reset_usage']),
    rounding: m.rounding ?? null,
    bucket_size: m.bucket_size,
  }
}

const meterProperties = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  event_name: { type: 'string', minLength: 1, maxLength: 255 },
  aggregation: {
    type: 'object',
    required: ['type'],
    additionalProperties: false,
    properties: {
      type: { type: 'string', enum: AGGREGATION_TYPES },
      field: { type: 'string', minLength: 1, maxLength: 255 },
      expression: {
        type: 'string', minLength: 1, maxLength: EXPRESSION_MAX_LENGTH,
        description: 'arithmetic over event properties instead of field: + - * / ( ), decimal literals, property names (a.b for nested), e.g. "input_tokens + 3 * output_tokens"',
      },
      multiplier: decimalString,
      group_by: { type: 'string', minLength: 1, maxLength: 255 },
    },
  },
  filters: {
    type: 'array',
    maxItems: 20,
    items: {
      type: 'object',
      required: ['key', 'values'],
      additionalProperties: false,
      properties: {
        key: { type: 'string', minLength: 1, maxLength: 255 },
        values: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string' } },
      },
    },
  },
  reset_usage: { type: 'string', enum: ['BILLING_PERIOD', 'NEVER'] },
  rounding: {
    anyOf: [
      {
        type: 'object', required: ['mode'], additionalProperties: false,
        properties: { mode: { type: 'string', enum: ROUNDING_MODES }, precision: { type: 'integer', minimum: 0, maximum: 12, default: 0 } },
      },
      { type: 'null' },
    ],
  },
  bucket_size: { type: 'string', enum: BUCKET_SIZES },
  metadata: metadataSchema,
} as const


const meterBody = { type: 'object', required: ['name', 'event_name', 'aggregation'], additionalProperties: false, properties: meterProperties } as const
const updateMeterBody = { type: 'object', additionalProperties: false, minProperties: 1, properties: meterProperties } as const

const usageBody = {
  type: 'object',
  required: ['start_time', 'end_time'],
  additionalProperties: false,
  properties: {
    external_customer_id: { type: 'string', minLength: 1 },
    start_time: dateTime,
    end_time: dateTime,
    window_size: { type: 'string', enum: ['MINUTE', 'HOUR', 'DAY'] },
    group_by: { type: 'array', maxItems: 5, items: { type: 'string', minLength: 1, maxLength: 255 } },
  },
} as const

export async function meterRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/meters', { schema: { tags: ['meters'], body: meterBody, response: { 201: ref('Meter') } } }, async (request, reply) => {
    const meter = await createMeter(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body)
    return reply.code(201).send(serializeMeter(meter))
  })

  app.get('/meters', { schema: { response: { 200: pageOf(ref('Meter')) }, tags: ['meters'], querystring: { type: 'object', properties: { ...paginationQuery, event_name: { type: 'string' } } } } }, async (request) => {
    const q = request.query
    const where: Record<string, unknown> = { ...scopeOf(request), status: 'published' }
    if (q.event_name) where.event_name = q.event_name.trim()
    const [items, total] = await ctx.orm.em.fork().findAndCount(MeterSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
    return listResponse(items.map(serializeMeter), total, q)
  })

  app.get('/meters/:id', { schema: { tags: ['meters'], params: idParams, response: { 200: ref('Meter') } } }, async (request) => {
    return serializeMeter(await getMeter(ctx.orm.em.fork(), scopeOf(request), request.params.id))
  })

  app.put('/meters/:id', { schema: { tags: ['meters'], params: idParams, body: updateMeterBody, response: { 200: ref('Meter') } } }, async (request) => {
    const meter = await updateMeter(ctx.orm.em.fork(), ctx.ch, scopeOf(request), request.auth.userId, request.params.id, request.body)
    return serializeMeter(meter)
  })

  app.delete('/meters/:id', { schema: { response: { 204: noContent }, tags: ['meters'], params: idParams } }, async (request, reply) => {
    const em = ctx.orm.em.fork()
    const meter = await getMeter(em, scopeOf(request), request.params.id)
    await retireRecord(em, meter, 'archived', request.auth.userId)
    return reply.code(204).send()
  })

  app.post('/meters/:id/usage', { config: READS, schema: { response: { 200: meterUsageSchema }, tags: ['meters'], params: idParams, body: usageBody } }, async (request) => {
    const meter = await getMeter(ctx.orm.em.fork(), scopeOf(request), request.params.id)
    return meterUsage(usageReader(ctx), meter, request.body)
  })
}
