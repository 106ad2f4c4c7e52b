import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { iso, serializeBase } from '../db/common.js'
import { dateTime, idParams, listResponse, metadataSchema, paginationQuery, type Page } from '../http/schemas.js'
import { BILLING_PERIODS } from '../plans/price.entity.js'
import { createSubscription, getSubscription, type CreateSubscriptionInput } from './service.js'
import { SubscriptionSchema, type Subscription, type SubscriptionLineItem } from './subscription.entity.js'

export function serializeSubscription(s: Subscription, lineItems?: SubscriptionLineItem[]) {
  return {
    ...serializeBase(s),
    customer_id: s.customer_id, plan_id: s.plan_id, currency: s.currency, subscription_status: s.subscription_status,
    billing_cadence: 'RECURRING', billing_period: s.billing_period, billing_period_count: s.billing_period_count,
    billing_cycle: s.billing_cycle, billing_anchor: iso(s.billing_anchor), start_date: iso(s.start_date), end_date: iso(s.end_date),
    current_period_start: iso(s.current_period_start), current_period_end: iso(s.current_period_end),
    cancel_at: iso(s.cancel_at), cancelled_at: iso(s.cancelled_at), cancel_at_period_end: s.cancel_at_period_end, version: s.version,
    ...(lineItems
      ? {
          line_items: lineItems.map((li) => ({
            ...serializeBase(li), subscription_id: li.subscription_id, customer_id: li.customer_id, price_id: li.price_id,
            meter_id: li.meter_id, currency: li.currency, display_name: li.display_name, quantity: li.quantity,
            start_date: iso(li.start_date), end_date: iso(li.end_date),
          })),
        }
      : {}),
  }
}

export async function subscriptionRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  app.post(
    '/subscriptions',
    {
      schema: {
        tags: ['subscriptions'],
        body: {
          type: 'object',
          required: ['plan_id', 'currency'],
          additionalProperties: false,
          properties: {
            customer_id: { type: 'string' },
            external_customer_id: { type: 'string' },
            plan_id: { type: 'string' },
            currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
            billing_period: { type: 'string', enum: BILLING_PERIODS.filter((p) => p !== 'ONETIME') },
            billing_period_count: { type: 'integer', minimum: 1, maximum: 120 },
            billing_cycle: { type: 'string', enum: ['anniversary', 'calendar'] },
            start_date: dateTime,
            metadata: metadataSchema,
          },
        },
      },
    },
    async (request, reply) => {
      const { subscription, lineItems } = await createSubscription(ctx.orm.em.fork(), scopeOf(request), request.auth.userId, ctx.clock, request.body as CreateSubscriptionInput)
      return reply.code(201).send(serializeSubscription(subscription, lineItems))
    },
  )

  app.get('/subscriptions/:id', { schema: { tags: ['subscriptions'], params: idParams } }, async (request) => {
    const { subscription, lineItems } = await getSubscription(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id)
    return serializeSubscription(subscription, lineItems)
  })

  app.get(
    '/subscriptions',
    { schema: { tags: ['subscriptions'], querystring: { type: 'object', properties: { ...paginationQuery, customer_id: { type: 'string' }, plan_id: { type: 'string' } } } } },
    async (request) => {
      const q = request.query as Page & { customer_id?: string; plan_id?: string }
      const where: Record<string, unknown> = { ...scopeOf(request), status: 'published' }
      if (q.customer_id) where.customer_id = q.customer_id
      if (q.plan_id) where.plan_id = q.plan_id
      const [items, total] = await ctx.orm.em.fork().findAndCount(SubscriptionSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
      return listResponse(items.map((s) => serializeSubscription(s)), total, q)
    },
  )
}
