// Analytics routes: meter usage detailed analytics, the usage analytics CSV export and the
// revenue dashboard. The spec names only /dashboard/revenue-dashboard; the other two paths are ours.
import { Readable } from 'node:stream'
import type { FastifyInstance, FastifyReply } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { refIdSchema } from '../http/catalog-schemas.js'
import { reportedUsageSchema } from '../features/index.js'
import { dateTime, paginationQuery } from '../http/schemas.js'
import { meterAnalytics } from './meter-analytics.js'
import { REVENUE_WINDOWS, revenueDashboard } from './revenue-dashboard.js'
import { usageExport } from './usage-export.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { download } from '../http/response-schemas.js'

const tags = ['analytics']
const str = { type: 'string' } as const
const nullableStr = { type: ['string', 'null'] } as const
const customerIds = { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 255 } } as const
const meterIds = { type: 'array', minItems: 1, maxItems: 100, items: refIdSchema } as const
const groups = { type: 'object', additionalProperties: { type: 'string' } } as const

const analyticsBody = {
  type: 'object',
  required: ['start_time', 'end_time'],
  additionalProperties: false,
  properties: {
    start_time: dateTime,
    end_time: dateTime,
    meter_ids: meterIds,
    external_customer_id: { type: 'string', minLength: 1, maxLength: 255 },
    external_customer_ids: customerIds,
    group_by: { type: 'array', maxItems: 5, items: { type: 'string', minLength: 1, maxLength: 255 } },
    window_size: { type: 'string', enum: ['MINUTE', 'HOUR', 'DAY'], description: 'bucket size of the breakdown (default DAY)' },
    breakdown_bucket: { type: 'boolean', default: false, description: 'true: each item carries its per-window series in buckets' },
  },
} as const

const bucket = {
  type: 'object',
  additionalProperties: false,
  properties: { window_start: { type: 'string', format: 'date-time' }, value: str, event_count: { type: 'integer' }, reported_usage: reportedUsageSchema },
} as const

const analyticsResponse = {
  type: 'object',
  additionalProperties: false,
  properties: {
    start_time: str,
    end_time: str,
    window_size: nullableStr,
    items: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          meter_id: str, meter_name: str, event_name: str, aggregation: str, feature_id: nullableStr, group_by: groups,
          value: str, event_count: { type: 'integer' }, reported_usage: reportedUsageSchema,
          buckets: { type: ['array', 'null'], items: bucket },
        },
      },
    },
  },
} as const

const exportBody = {
  type: 'object',
  required: ['start_time', 'end_time'],
  additionalProperties: false,
  properties: {
    start_time: dateTime,
    end_time: dateTime,
    meter_ids: meterIds,
    external_customer_ids: customerIds,
    metadata_fields: { type: 'array', maxItems: 50, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 255 } },
  },
} as const

const revenueBody = {
  type: 'object',
  required: ['start_time', 'end_time'],
  additionalProperties: false,
  properties: {
    start_time: dateTime,
    end_time: dateTime,
    window_size: { type: 'string', enum: REVENUE_WINDOWS, default: 'MONTH' },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    ...paginationQuery,
  },
} as const

const revenueResponse = {
  type: 'object',
  additionalProperties: false,
  properties: {
    start_time: str,
    end_time: str,
    window_size: str,
    items: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          customer_id: str, external_customer_id: nullableStr, customer_name: nullableStr, currency: str,
          total_revenue: { type: 'string', description: 'sum of the totals of the finalized invoices (exact decimal string)' },
          invoice_count: { type: 'integer' },
          series: {
            type: 'array',
            items: { type: 'object', additionalProperties: false, properties: { window_start: str, revenue: str, invoice_count: { type: 'integer' } } },
          },
        },
      },
    },
    pagination: { type: 'object', properties: { limit: { type: 'integer' }, offset: { type: 'integer' }, total: { type: 'integer' } } },
  },
} as const

/** A CSV streamed as its rows are read (the reply is untyped here: its body is a stream, not the schema's string). */
function sendCsvStream(reply: FastifyReply, chunks: Iterable<string> | AsyncIterable<string>, filename: string) {
  return reply
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="${filename}"`)
    .send(Readable.from(chunks))
}

export async function analyticsRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/analytics/meter-usage', { config: READS, schema: { tags, body: analyticsBody, response: { 200: analyticsResponse } } }, async (request) => {
    return meterAnalytics(ctx, ctx.orm.em.fork(), scopeOf(request), request.body)
  })

  app.post('/analytics/usage/export', {
    config: READS,
    schema: { tags, body: exportBody, response: { 200: download('text/csv', 'the usage rows as CSV, streamed') } },
  }, async (request, reply) => {
    const log = (msg: string, fields: Record<string, unknown>) => request.log.info(fields, msg)
    const csv = await usageExport(ctx, ctx.orm.em.fork(), scopeOf(request), request.body, log)
    return sendCsvStream(reply, csv.chunks, 'usage-analytics.csv')
  })

  app.post('/dashboard/revenue-dashboard', { config: READS, schema: { tags, body: revenueBody, response: { 200: revenueResponse } } }, async (request) => {
    return revenueDashboard(ctx.orm.em.fork(), scopeOf(request), request.body)
  })
}
