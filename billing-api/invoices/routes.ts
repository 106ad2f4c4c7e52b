import type { FastifyInstance } from 'fastify'
import { ValidationError } from '../../platform/errors.js'
import { scopeOf } from '../auth/authenticate.js'
import type { BillingContext } from '../context.js'
import { iso, serializeBase } from '../db/common.js'
import { dateTime, idParams, listResponse, paginationQuery, type Page } from '../http/schemas.js'
import { getSubscription } from '../subscriptions/service.js'
import { INVOICE_AMOUNT_FIELDS, InvoiceSchema, type Invoice, type InvoiceLineItem } from './invoice.entity.js'
import { computeSubscriptionInvoice, getInvoice, type ComputedInvoice } from './service.js'

export function serializeInvoice(inv: Invoice, lines?: InvoiceLineItem[]) {
  return {
    ...serializeBase(inv),
    customer_id: inv.customer_id, subscription_id: inv.subscription_id, invoice_type: inv.invoice_type,
    invoice_status: inv.invoice_status, payment_status: inv.payment_status, currency: inv.currency,
    billing_reason: inv.billing_reason, billing_period: inv.billing_period,
    ...Object.fromEntries(INVOICE_AMOUNT_FIELDS.map((f) => [f, inv[f]])),
    invoice_number: inv.invoice_number, billing_sequence: inv.billing_sequence, idempotency_key: inv.idempotency_key,
    description: inv.description, period_start: iso(inv.period_start), period_end: iso(inv.period_end),
    issue_date: iso(inv.issue_date), due_date: iso(inv.due_date), finalized_at: iso(inv.finalized_at), paid_at: iso(inv.paid_at),
    voided_at: iso(inv.voided_at), last_computed_at: iso(inv.last_computed_at), version: inv.version,
    ...(lines
      ? {
          line_items: lines.map((l) => ({
            ...serializeBase(l), invoice_id: l.invoice_id, customer_id: l.customer_id, subscription_id: l.subscription_id,
            subscription_line_item_id: l.subscription_line_item_id, price_id: l.price_id, price_type: l.price_type,
            meter_id: l.meter_id, currency: l.currency, display_name: l.display_name, amount: l.amount, quantity: l.quantity,
            period_start: iso(l.period_start), period_end: iso(l.period_end),
          })),
        }
      : {}),
  }
}

function serializePreview(c: ComputedInvoice) {
  return {
    subscription_id: c.subscription.id, customer_id: c.subscription.customer_id, currency: c.subscription.currency,
    billing_reason: c.reason, invoice_status: 'DRAFT', period_start: c.periodStart.toISOString(), period_end: c.periodEnd.toISOString(),
    subtotal: c.subtotal, total_discount: '0', total_tax: '0', total: c.subtotal, amount_due: c.subtotal,
    line_items: c.lines.map((l) => ({
      subscription_line_item_id: l.lineItem.id, price_id: l.price.id, price_type: l.price.type, meter_id: l.price.meter_id,
      display_name: l.lineItem.display_name, quantity: l.quantity, amount: l.amount,
      period_start: l.periodStart.toISOString(), period_end: l.periodEnd.toISOString(),
    })),
  }
}

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
    const { invoice, lines } = await getInvoice(ctx.orm.em.fork(), scopeOf(request), (request.params as { id: string }).id)
    return serializeInvoice(invoice, lines)
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
}
