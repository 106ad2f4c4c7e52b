// Read-only view of the latest counted events of the key's environment (GET /v1/events): what a
// developer checks after wiring ingestion. Writes stay with ingest (POST /v1/events).
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { listResponse } from '../http/schemas.js'
import { typed } from '../http/typed-routes.js'
import { queryEventsRoute } from './query-route.js'
import { readLatestEvents } from './latest.js'

const eventItem = {
  type: 'object',
  required: ['event_id', 'event_name', 'external_customer_id', 'customer_id', 'timestamp', 'source', 'properties', 'ingested_at'],
  properties: {
    event_id: { type: 'string' },
    event_name: { type: 'string' },
    external_customer_id: { type: 'string' },
    customer_id: { type: 'string' },
    timestamp: { type: 'string', format: 'date-time' },
    source: { type: 'string' },
    properties: { type: 'object', additionalProperties: true },
    ingested_at: { type: 'string', format: 'date-time', description: 'when ingest acknowledged the event (202)' },
  },
} as const

const eventsResponse = {
  type: 'object',
  required: ['items', 'pagination'],
  properties: {
    items: { type: 'array', items: eventItem },
    pagination: {
      type: 'object', required: ['limit', 'offset', 'total'],
      properties: { limit: { type: 'integer' }, offset: { type: 'integer' }, total: { type: 'integer' } },
    },
  },
} as const

export async function eventRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.get('/events', {
    schema: {
      tags: ['events'],
      summary: 'The latest counted events of the environment, newest acknowledgement first',
      querystring: {
        type: 'object',
        additionalProperties: false,
        properties: {
          // A console page, not an export: the offset is bounded so a deep page stays cheap.
          limit: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
          offset: { type: 'integer', minimum: 0, maximum: 10_000, default: 0 },
          event_name: { type: 'string', minLength: 1, maxLength: 255 },
          external_customer_id: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      response: { 200: eventsResponse },
    },
  }, async (request) => {
    const q = request.query
    const { items, total } = await readLatestEvents(ctx, scopeOf(request), q)
    return listResponse(items, total, q)
  })
  queryEventsRoute(app, ctx)
}
