// GET /invoices/{id}/lines/{line_id}/explain (explain-line.ts).
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { explainLine } from './explain-line.js'
import { typed } from '../http/typed-routes.js'

const params = {
  type: 'object',
  required: ['id', 'line_id'],
  additionalProperties: false,
  properties: { id: { type: 'string', minLength: 1, maxLength: 100 }, line_id: { type: 'string', minLength: 1, maxLength: 100 } },
} as const

const querystring = {
  type: 'object',
  additionalProperties: false,
  properties: {
    window_size: { type: 'string', enum: ['MINUTE', 'HOUR', 'DAY'], default: 'DAY' },
    events_limit: { type: 'integer', minimum: 1, maximum: 1000, default: 50 },
    events_cursor: { type: 'string', minLength: 1, maxLength: 500 },
  },
} as const

const response = {
  200: {
    type: 'object',
    additionalProperties: true,
    required: ['invoice_id', 'line_id', 'meter', 'period', 'quantity', 'pricing', 'amount', 'explained_amount', 'amount_matches', 'events'],
    properties: {
      invoice_id: { type: 'string' }, line_id: { type: 'string' }, meter: {}, period: {}, quantity: {}, pricing: {},
      amount: { type: 'string' }, explained_amount: { type: 'string' }, amount_matches: { type: 'boolean' }, events: {},
    },
  },
} as const

export async function explainRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.get('/invoices/:id/lines/:line_id/explain', { schema: { tags: ['invoices'], params, querystring, response } }, async (request) => {
    const { id, line_id: lineId } = request.params
    return explainLine(ctx, ctx.orm.em.fork(), scopeOf(request), id, lineId, request.query)
  })
}
