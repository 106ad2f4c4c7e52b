// POST /v1/events/query: the same read as GET /v1/events with a JSON body and the answer shape of
// Flexprice's raw-event listing ({events, has_more, total_count, ...}), where its SDK reads events.
// Offset paging only: iter_first_key and iter_last_key are always null.
import type { FastifyInstance } from 'fastify'
import { NotFoundError } from '../../platform/errors.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { READS } from '../http/route-access.js'
import { alwaysNull } from '../http/response-schemas.js'
import { typed } from '../http/typed-routes.js'
import { readLatestEvents } from './latest.js'

const body = {
  type: 'object',
  additionalProperties: false,
  properties: {
    page_size: { type: 'integer', minimum: 1, maximum: 200, default: 50 },
    offset: { type: 'integer', minimum: 0, maximum: 10_000, default: 0 },
    event_name: { type: 'string', minLength: 1, maxLength: 255 },
    external_customer_id: { type: 'string', minLength: 1, maxLength: 255 },
  },
} as const

const str = { type: 'string' } as const
const event = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'event_name', 'external_customer_id', 'customer_id', 'environment_id', 'timestamp', 'source', 'properties'],
  properties: {
    id: { ...str, description: 'the event_id it was sent with' },
    event_name: str, external_customer_id: str, customer_id: str, environment_id: str, source: str,
    timestamp: { type: 'string', format: 'date-time' },
    properties: { type: 'object', additionalProperties: true },
  },
} as const

const response = {
  type: 'object',
  additionalProperties: false,
  required: ['events', 'has_more', 'offset', 'total_count', 'iter_first_key', 'iter_last_key'],
  properties: {
    events: { type: 'array', items: event },
    has_more: { type: 'boolean' },
    offset: { type: 'integer' },
    total_count: { type: 'integer' },
    iter_first_key: alwaysNull,
    iter_last_key: alwaysNull,
  },
} as const

export function queryEventsRoute(instance: FastifyInstance, ctx: BillingContext): void {
  const app = typed(instance)
  // One counted event by the id it was sent with (the newest acknowledged, if it was sent with
  // several timestamps), in Flexprice's shape: status "processed" (it is counted); the debug
  // tracker and the processed rows of Flexprice's pipeline are null.
  app.get('/events/:id', {
    schema: {
      tags: ['events'], summary: 'One counted event by its event_id',
      params: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 255 } } },
      response: {
        200: {
          type: 'object', additionalProperties: false, required: ['event', 'status', 'processed_events', 'debug_tracker'],
          properties: { event, status: str, processed_events: alwaysNull, debug_tracker: alwaysNull },
        },
      },
    },
  }, async (request) => {
    const scope = scopeOf(request)
    const { items: [found] } = await readLatestEvents(ctx, scope, { event_id: request.params.id, limit: 1, offset: 0 })
    if (!found) throw new NotFoundError('event', request.params.id)
    const { event_id, ingested_at: _acknowledged, ...e } = found
    return { event: { ...e, id: event_id, environment_id: scope.environment_id }, status: 'processed', processed_events: null, debug_tracker: null }
  })

  app.post('/events/query', { config: READS, schema: { tags: ['events'], summary: 'The latest counted events, newest acknowledgement first', body, response: { 200: response } } }, async (request) => {
    const q = request.body
    const scope = scopeOf(request)
    const { items, total } = await readLatestEvents(ctx, scope, { ...q, limit: q.page_size })
    const events = items.map(({ event_id, ingested_at: _acknowledged, ...e }) => ({ ...e, id: event_id, environment_id: scope.environment_id }))
    return { events, has_more: q.offset + events.length < total, offset: q.offset, total_count: total, iter_first_key: null, iter_last_key: null }
  })
}
