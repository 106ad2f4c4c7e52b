import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { iso, serializeBase } from '../db/common.js'
import { idParams, listResponse, metadataSchema, nonNegativeDecimalString, paginationQuery, type Page } from '../http/schemas.js'
import { PlanSchema, type Plan } from './plan.entity.js'
import { BILLING_PERIODS, type Price } from './price.entity.js'
import { createPlan, getPlan, type PlanInput } from './service.js'

export function serializePrice(p: Price) {
  return {
    ...serializeBase(p),
    entity_type: p.entity_type, entity_id: p.entity_id, type: p.type, billing_model: p.billing_model, tier_mode: p.tier_mode,
    currency: p.currency, amount: p.amount, meter_id: p.meter_id, billing_period: p.billing_period,
    billing_period_count: p.billing_period_count, billing_cadence: p.billing_cadence, invoice_cadence: p.invoice_cadence,
    trial_period_days: p.trial_period_days, tiers: p.tiers, transform_quantity: p.transform_quantity, min_quantity: p.min_quantity,
    lookup_key: p.lookup_key, description: p.description, display_name: p.display_name, sequence: p.sequence,
    start_date: iso(p.start_date), end_date: iso(p.end_date),
  }
}

export function serializePlan(plan: Plan, prices: Price[]) {
  return {
    ...serializeBase(plan), name: plan.name, lookup_key: plan.lookup_key, description: plan.description,
    display_order: plan.display_order, prices: prices.map(serializePrice),
  }
}

export const priceInputSchema = {
  type: 'object',
  required: ['type', 'billing_model', 'currency', 'billing_period', 'invoice_cadence'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['FIXED', 'USAGE'] },
    billing_model: { type: 'string', enum: ['FLAT_FEE', 'PACKAGE', 'TIERED'] },
    tier_mode: { type: 'string', enum: ['VOLUME', 'SLAB'] },
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    amount: nonNegativeDecimalString,
    meter_id: { type: 'string' },
    billing_period: { type: 'string', enum: BILLING_PERIODS },
    billing_period_count: { type: 'integer', minimum: 1, maximum: 120 },
    invoice_cadence: { type: 'string', enum: ['ADVANCE', 'ARREAR'] },
    trial_period_days: { type: 'integer', minimum: 0 },
    tiers: {
      type: 'array',
      minItems: 1,
      maxItems: 50,
      items: {
        type: 'object',
        required: ['unit_amount'],
        additionalProperties: false,
        properties: {
          up_to: { type: ['integer', 'null'], minimum: 1 },
          unit_amount: nonNegativeDecimalString,
          flat_amount: nonNegativeDecimalString,
        },
      },
    },
    transform_quantity: {
      type: 'object',
      required: ['divide_by'],
      additionalProperties: false,
      properties: { divide_by: { type: 'integer', minimum: 1 }, round: { type: 'string', enum: ['up', 'down'] } },
    },
    min_quantity: nonNegativeDecimalString,
    lookup_key: { type: 'string', maxLength: 255 },
    description: { type: 'string', maxLength: 2000 },
    display_name: { type: 'string', maxLength: 255 },
    metadata: metadataSchema,
  },
} as const

export async function planRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  app.post(
    '/plans',
    {
      schema: {
        tags: ['plans'],
        body: {
          type: 'object',
          required: ['name'],
          additionalProperties: false,
          properties: {
            name: { type: 'string', minLength: 1, maxLength: 255 },
            lookup_key: { type: 'string', minLength: 1, maxLength: 255 },
            description: { type: 'string', maxLength: 2000 },
            display_order: { type: 'integer' },
            prices: { type: 'array', maxItems: 100, items: priceInputSchema },
            metadata: metadataSchema,
          },
        },
      },
    },
    async (request, reply) => {
      const { plan, prices } = await createPlan(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.body as PlanInput)
      return reply.code(201).send(serializePlan(plan, prices))
    },
  )

  app.get('/plans', { schema: { tags: ['plans'], querystring: { type: 'object', properties: paginationQuery } } }, async (request) => {
    const q = request.query as Page
    const [items, total] = await ctx.orm.em.fork().findAndCount(PlanSchema, { ...scopeOf(request), status: 'published' }, { orderBy: { display_order: 'asc', created_at: 'asc' }, limit: q.limit, offset: q.offset })
    return listResponse(items.map((p) => serializePlan(p, [])), total, q)
  })

  app.get('/plans/:id', { schema: { tags: ['plans'], params: idParams } }, async (request) => {
    const { plan, prices } = await getPlan(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id)
    return serializePlan(plan, prices)
  })
}
