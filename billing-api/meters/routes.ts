import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { serializeBase } from '../db/common.js'
import { dateTime, decimalString, idParams, listResponse, metadataSchema, paginationQuery, type Page } from '../http/schemas.js'
import { AGGREGATION_TYPES, MeterSchema, type Meter } from './meter.entity.js'
import { createMeter, getMeter, meterUsage, type CreateMeterInput, type UsageRequest } from './service.js'
import { usageReader } from './usage-reader.js'

export function serializeMeter(m: Meter) {
  return {
    ...serializeBase(m),
    name: m.name,
    event_name: m.event_name,
    aggregation: m.aggregation,
    filters: m.filters,
    reset_usage: m.reset_usage,
  }
}

const meterBody = {
  type: 'object',
  required: ['name', 'event_name', 'aggregation'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    event_name: { type: 'string', minLength: 1, maxLength: 255 },
    aggregation: {
      type: 'object',
      required: ['type'],
      additionalProperties: false,
      properties: {
        type: { type: 'string', enum: AGGREGATION_TYPES },
        field: { type: 'string', minLength: 1, maxLength: 255 },
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
    metadata: metadataSchema,
  },
} as const

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

export async function meterRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  app.post('/meters', { schema: { tags: ['meters'], body: meterBody } }, async (request, reply) => {
    const meter = await createMeter(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body as CreateMeterInput)
    return reply.code(201).send(serializeMeter(meter))
  })

  app.get('/meters', { schema: { tags: ['meters'], querystring: { type: 'object', properties: { ...paginationQuery, event_name: { type: 'string' } } } } }, async (request) => {
    const q = request.query as Page & { event_name?: string }
    const where: Record<string, unknown> = { ...scopeOf(request), status: 'published' }
    if (q.event_name) where.event_name = q.event_name.trim()
    const [items, total] = await ctx.orm.em.fork().findAndCount(MeterSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
    return listResponse(items.map(serializeMeter), total, q)
  })

  app.get('/meters/:id', { schema: { tags: ['meters'], params: idParams } }, async (request) => {
    return serializeMeter(await getMeter(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id))
  })

  app.delete('/meters/:id', { schema: { tags: ['meters'], params: idParams } }, async (request, reply) => {
    const em = ctx.orm.em.fork()
    const meter = await getMeter(em, scopeOf(request), (request.params as { id: string }).id)
    meter.status = 'archived'
    meter.updated_by = request.auth.userId
    await em.flush()
    return reply.code(204).send()
  })

  app.post('/meters/:id/usage', { schema: { tags: ['meters'], params: idParams, body: usageBody } }, async (request) => {
    const meter = await getMeter(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id)
    return meterUsage(usageReader(ctx), meter, request.body as UsageRequest)
  })
}
