import type { FastifyInstance } from 'fastify'
import { ValidationError } from '../../platform/errors.js'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { dateTime, decimalString, idParams, listResponse, paginationQuery, type Page } from '../http/schemas.js'
import { getSubscription } from '../subscriptions/service.js'
import { InvoiceSchema } from './invoice.entity.js'
import { finalizeInvoice, voidInvoice, type ChangeOptions } from './lifecycle.js'
import { recordPayment, type PaymentInput } from './payments.js'
import { invoiceSearchBody, searchInvoices, type InvoiceSearch } from './search.js'
import { expandInvoices, parseExpand } from './search-expand.js'
import { serializeInvoice, serializePayment } from './serialize.js'
import { getInvoice, type InvoiceDetail } from './service.js'
import { computeSubscriptionInvoice, type ComputedInvoice } from '../billing/subscription-invoice.js'
import { recomputeInvoice } from '../billing/recompute.js'
import { enqueueInvoiceCompute } from '../billing/compute-job.js'

export { serializeInvoice } from './serialize.js'

/** Body of the state-changing endpoints: the version the caller last read (optimistic locking). */
const versionProperty = { version: { type: 'integer', minimum: 1 } } as const
const changeBody = { type: 'object', additionalProperties: false, properties: versionProperty } as const

function serializePreview(c: ComputedInvoice) {
  return {
    subscription_id: c.subscription.id, customer_id: c.subscription.customer_id, currency: c.subscription.currency,
    billing_reason: c.reason, invoice_status: 'DRAFT', period_start: c.periodStart.toISOString(), period_end: c.periodEnd.toISOString(),
    // Taxes and credits are applied at finalization only, so a preview shows none.
    subtotal: c.subtotal, total_discount: c.total_discount, total_tax: '0', total: c.total, amount_due: c.total,
    line_items: c.lines.map((l) => ({
      subscription_line_item_id: l.lineItem.id, price_id: l.price.id, price_type: l.price.type, meter_id: l.price.meter_id,
      display_name: l.lineItem.display_name, quantity: l.quantity, amount: l.amount,
      line_item_discount: l.line_item_discount, invoice_level_discount: l.invoice_level_discount,
      period_start: l.periodStart.toISOString(), period_end: l.periodEnd.toISOString(),
    })),
    coupon_applications: c.couponApplications.map((a) => ({
      coupon_id: a.attached.coupon.id, coupon_association_id: a.attached.association.id,
      subscription_line_item_id: a.lineIndex === null ? null : c.lines[a.lineIndex].lineItem.id,
      discount_percentage: a.discount_percentage, discounted_amount: a.discounted_amount, original_price: a.original_price, final_price: a.final_price,
    })),
  }
}

/** The full wire form of one invoice: lines, coupon applications and taxes. */
const serializeDetail = (d: InvoiceDetail) => serializeInvoice(d.invoice, d.lines, d)

export async function invoiceRoutes(app: FastifyInstance, ctx: BillingContext): Promise<void> {
  app.post(
    '/invoices/internal/preview',
    {
      schema: {
        tags: ['invoices'],
        body: {
          type: 'object',
          required: ['subscription_id'],
          additionalProperties: false,
          properties: { subscription_id: { type: 'string' }, period_start: dateTime, period_end: dateTime },
        },
      },
    },
    async (request) => {
      const body = request.body as { subscription_id: string; period_start?: string; period_end?: string }
      const em = ctx.orm.em.fork()
      const { subscription } = await getSubscription(em, scopeOf(request), body.subscription_id)
      const start = body.period_start ? new Date(body.period_start) : subscription.current_period_start
      const end = body.period_end ? new Date(body.period_end) : subscription.current_period_end
      if (!(start < end)) throw new ValidationError('period_start must be before period_end', 'period_start')
      return serializePreview(await computeSubscriptionInvoice(ctx, em, subscription, start, end, 'SUBSCRIPTION_CYCLE'))
    },
  )

  app.get('/invoices/:id', { schema: { tags: ['invoices'], params: idParams } }, async (request) => {
    return serializeDetail(await getInvoice(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id))
  })

  app.get(
    '/invoices',
    { schema: { tags: ['invoices'], querystring: { type: 'object', properties: { ...paginationQuery, subscription_id: { type: 'string' }, customer_id: { type: 'string' } } } } },
    async (request) => {
      const q = request.query as Page & { subscription_id?: string; customer_id?: string }
      const where: Record<string, unknown> = { ...scopeOf(request), status: 'published', invoice_status: { $ne: 'SKIPPED' } }
      if (q.subscription_id) where.subscription_id = q.subscription_id
      if (q.customer_id) where.customer_id = q.customer_id
      const [items, total] = await ctx.orm.em.fork().findAndCount(InvoiceSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
      return listResponse(items.map((i) => serializeInvoice(i)), total, q)
    },
  )

  app.post('/invoices/search', { schema: { tags: ['invoices'], body: invoiceSearchBody } }, async (request) => {
    const body = request.body as InvoiceSearch
    const expansions = parseExpand(body.expand)
    const em = ctx.orm.em.fork()
    const { items, total, lines } = await searchInvoices(em, scopeOf(request), body)
    const expanded = await expandInvoices(em, scopeOf(request), items, expansions)
    return listResponse(items.map((i) => ({ ...serializeInvoice(i, lines ? (lines.get(i.id) ?? []) : undefined), ...expanded.get(i.id) })), total, body)
  })

  // State changes. Each answers the invoice after the change (its new version included).
  for (const [action, change] of [['finalize', finalizeInvoice], ['void', voidInvoice]] as const) {
    app.post(`/invoices/:id/${action}`, {
      schema: { tags: ['invoices'], params: idParams, body: changeBody },
      // The body is optional: a bare POST (no content) acts on the current version.
      preValidation: async (request) => {
        request.body ??= {}
      },
    }, async (request) => {
      const body = request.body as ChangeOptions
      const em = ctx.orm.em.fork()
      const scope = scopeOf(request)
      const { id } = request.params as { id: string }
      await change(ctx, em, scope, id, body)
      return serializeDetail(await getInvoice(ctx.orm.em.fork(), scope, id))
    })
  }

  // Recomputation of a DRAFT or SKIPPED invoice (recompute.ts). sync=true recomputes in the
  // request and answers the recomputed invoice.
  app.post('/invoices/:id/compute', {
    schema: {
      tags: ['invoices'], params: idParams, body: changeBody,
      querystring: { type: 'object', additionalProperties: false, properties: { sync: { type: 'boolean', default: false } } },
    },
    preValidation: async (request) => {
      request.body ??= {}
    },
  }, async (request, reply) => {
    const { id } = request.params as { id: string }
    const { sync } = request.query as { sync: boolean }
    const scope = scopeOf(request)
    // BEGIN async compute (helper A2: queued job, compute-job.ts; poll GET /invoices/compute-jobs/{workflow_id})
    if (!sync) return reply.code(202).send(await enqueueInvoiceCompute(ctx, ctx.orm.em.fork(), scope, id, request.body as ChangeOptions))
    // END async compute
    await recomputeInvoice(ctx, ctx.orm.em.fork(), scope, id, request.body as ChangeOptions)
    return serializeDetail(await getInvoice(ctx.orm.em.fork(), scope, id))
  })

  app.post(
    '/invoices/:id/payments',
    {
      schema: {
        tags: ['invoices'],
        params: idParams,
        body: {
          type: 'object',
          required: ['amount'],
          additionalProperties: false,
          properties: {
            amount: decimalString,
            paid_at: dateTime,
            reference: { type: 'string', minLength: 1, maxLength: 255 },
            idempotency_key: { type: 'string', minLength: 1, maxLength: 255 },
            ...versionProperty,
          },
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params as { id: string }
      const scope = scopeOf(request)
      const { payment } = await recordPayment(ctx, ctx.orm.em.fork(), scope, id, request.body as PaymentInput, request.auth.userId)
      // The invoice as stored after the payment.
      const { invoice } = await getInvoice(ctx.orm.em.fork(), scope, id)
      void reply.code(201)
      return { ...serializePayment(payment), invoice: serializeInvoice(invoice) }
    },
  )
}
