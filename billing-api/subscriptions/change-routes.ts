// Routes of line item search and subscription modification; registered with the subscription
// routes by module.ts.
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { iso } from '../db/common.js'
import { dateTime, idParams, listResponse, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
import { serializeInvoice } from '../invoices/index.js'
import { LINE_ITEM_SORT_FIELDS, LINE_ITEM_STATUSES, searchLineItems } from './line-items-search.js'
import { applyModification, CHANGE_TYPES, previewModification, PRORATION_BEHAVIORS, type ModificationInput, type ModificationPlan } from './modify.js'
import { serializeLineItem, serializeSubscription } from './routes.js'
import { isLineSetChange, LINE_SET_CHANGE_TYPES } from './line-set-change.js'
import { applyLineSet, lineSetBodyProperties, previewLineSet } from './line-set-routes.js'
import { applyGroupedInvoicing, GROUPED_INVOICING_CHANGE_TYPES, groupedInvoicingBodyProperties, isGroupedInvoicingChange, previewGroupedInvoicing } from './grouped-invoicing.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { pageOf, ref } from '../http/response-schemas.js'
import { modifyPreviewSchema, modifyResultSchema } from './response-schemas.js'

const ids = { type: 'array', minItems: 1, maxItems: 1000, items: { type: 'string', minLength: 1, maxLength: 100 } } as const

const modifyBody = {
  type: 'object',
  required: ['change_type'],
  additionalProperties: false,
  properties: {
    change_type: { type: 'string', enum: [...CHANGE_TYPES, ...LINE_SET_CHANGE_TYPES, ...GROUPED_INVOICING_CHANGE_TYPES] },
    line_item_id: { type: 'string', minLength: 1, maxLength: 100 },
    price_id: { type: 'string', minLength: 1, maxLength: 100 },
    // zero passes the schema so the use case answers "must be greater than 0"
    quantity: nonNegativeDecimalString,
    effective_date: dateTime,
    proration_behavior: { type: 'string', enum: PRORATION_BEHAVIORS },
    version: { type: 'integer', minimum: 1 },
    ...lineSetBodyProperties, // plan_change, addon_attach, addon_detach
    ...groupedInvoicingBodyProperties, // grouped_invoicing_add, grouped_invoicing_remove
  },
} as const

function serializePlan(p: ModificationPlan) {
  const s = p.subscription
  return {
    subscription_id: s.id, change_type: p.changeType, line_item_id: p.lineItem?.id ?? null, price_id: p.price.id,
    old_quantity: p.lineItem?.quantity ?? null, new_quantity: p.quantity, effective_date: iso(p.effective), proration_behavior: p.prorationBehavior,
    invoice_preview: {
      subscription_id: s.id, customer_id: s.customer_id, currency: s.currency, billing_reason: 'PRORATION',
      period_start: iso(p.effective), period_end: iso(s.current_period_end), subtotal: p.total, total: p.total,
      line_items: p.lines.map((l) => ({
        subscription_line_item_id: l.subscription_line_item_id, price_id: l.price_id, price_type: 'FIXED', display_name: l.display_name,
        quantity: l.quantity, amount: l.amount, period_start: iso(l.period_start), period_end: iso(l.period_end),
      })),
    },
  }
}

export async function subscriptionChangeRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post(
    '/subscriptions/lineitems/search',
    {
      config: READS,
      schema: {
        response: { 200: pageOf(ref('SubscriptionLineItem')) },
        tags: ['subscriptions'],
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            ...paginationQuery,
            subscription_ids: ids,
            price_ids: ids,
            customer_id: { type: 'string', minLength: 1, maxLength: 100 },
            status: { type: 'string', enum: LINE_ITEM_STATUSES },
            active_at: dateTime,
            start_date_gte: dateTime,
            start_date_lte: dateTime,
            end_date_gte: dateTime,
            end_date_lte: dateTime,
            sort: {
              type: 'array',
              maxItems: 3,
              items: {
                type: 'object',
                required: ['field'],
                additionalProperties: false,
                properties: { field: { type: 'string', enum: LINE_ITEM_SORT_FIELDS }, direction: { type: 'string', enum: ['asc', 'desc'], default: 'asc' } },
              },
            },
          },
        },
      },
    },
    async (request) => {
      const filter = request.body
      const [items, total] = await searchLineItems(ctx.orm.em.fork(), scopeOf(request), filter)
      return listResponse(items.map(serializeLineItem), total, filter)
    },
  )

  app.post(
    '/subscriptions/:id/modify/preview',
    { config: READS, schema: { response: { 200: modifyPreviewSchema }, tags: ['subscriptions'], params: idParams, body: modifyBody } },
    async (request) => {
      const { id } = request.params
      const body = request.body
      if (isLineSetChange(body)) return previewLineSet(ctx, scopeOf(request), id, body)
      if (isGroupedInvoicingChange(body)) return previewGroupedInvoicing(ctx, scopeOf(request), id, body)
      return serializePlan(await previewModification(ctx, scopeOf(request), id, body as ModificationInput))
    },
  )

  app.post(
    '/subscriptions/:id/modify',
    { schema: { response: { 200: modifyResultSchema }, tags: ['subscriptions'], params: idParams, body: modifyBody } },
    async (request) => {
      const { id } = request.params
      const body = request.body
      const applied = isLineSetChange(body)
        ? await applyLineSet(ctx, scopeOf(request), request.auth.userId, id, body)
        : isGroupedInvoicingChange(body)
          ? await applyGroupedInvoicing(ctx, scopeOf(request), request.auth.userId, id, body)
          : await applyModification(ctx, scopeOf(request), request.auth.userId, id, body as ModificationInput)
      return {
        subscription: serializeSubscription(applied.subscription, applied.lineItems),
        invoice: applied.invoice ? serializeInvoice(applied.invoice.invoice, applied.invoice.lines) : null,
      }
    },
  )
}
