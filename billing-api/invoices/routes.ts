import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { dateTime, decimalString, idParams, listResponse, paginationQuery } from '../http/schemas.js'
import { InvoiceSchema } from './invoice.entity.js'
import { finalizeInvoice, voidInvoice } from './lifecycle.js'
import { recordPayment } from './payments.js'
import { invoiceSearchBody, searchInvoices } from './search.js'
import { expandInvoices, parseExpand } from './search-expand.js'
import { serializeInvoice, serializePayment } from './serialize.js'
import { getInvoice, type InvoiceDetail } from './service.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { pageOf, ref } from '../http/response-schemas.js'

export { serializeInvoice } from './serialize.js'

/** Body of the state-changing endpoints: the version the caller last read (optimistic locking). */
const versionProperty = { version: { type: 'integer', minimum: 1 } } as const
const changeBody = { type: 'object', additionalProperties: false, properties: versionProperty } as const

/** The full wire form of one invoice: lines, coupon applications and taxes. */
const serializeDetail = (d: InvoiceDetail) => serializeInvoice(d.invoice, d.lines, d)

export async function invoiceRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.get('/invoices/:id', { schema: { response: { 200: ref('Invoice') }, tags: ['invoices'], params: idParams } }, async (request) => {
    return serializeDetail(await getInvoice(ctx.orm.em.fork(), scopeOf(request), request.params.id))
  })

  app.get(
    '/invoices',
    { schema: { response: { 200: pageOf(ref('Invoice')) }, tags: ['invoices'], querystring: { type: 'object', properties: { ...paginationQuery, subscription_id: { type: 'string' }, customer_id: { type: 'string' } } } } },
    async (request) => {
      const q = request.query
      const where: Record<string, unknown> = { ...scopeOf(request), status: 'published', invoice_status: { $ne: 'SKIPPED' } }
      if (q.subscription_id) where.subscription_id = q.subscription_id
      if (q.customer_id) where.customer_id = q.customer_id
      const [items, total] = await ctx.orm.em.fork().findAndCount(InvoiceSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
      return listResponse(items.map((i) => serializeInvoice(i)), total, q)
    },
  )

  app.post('/invoices/search', { config: READS, schema: { response: { 200: pageOf(ref('Invoice')) }, tags: ['invoices'], body: invoiceSearchBody } }, async (request) => {
    const body = request.body
    const expansions = parseExpand(body.expand)
    const em = ctx.orm.em.fork()
    const { items, total, lines } = await searchInvoices(em, scopeOf(request), body)
    const expanded = await expandInvoices(em, scopeOf(request), items, expansions)
    return listResponse(items.map((i) => ({ ...serializeInvoice(i, lines ? (lines.get(i.id) ?? []) : undefined), ...expanded.get(i.id) })), total, body)
  })

  // State changes. Each answers the invoice after the change (its new version included) and a
  // `message` saying what was done (the answer Flexprice's SDK reads).
  for (const [action, change, done] of [['finalize', finalizeInvoice, 'finalized'], ['void', voidInvoice, 'voided']] as const) {
    app.post(`/invoices/:id/${action}`, {
      schema: { response: { 200: ref('InvoiceStateChange') }, tags: ['invoices'], params: idParams, body: changeBody },
      // The body is optional: a bare POST (no content) acts on the current version.
      preValidation: async (request) => {
        request.body ??= {}
      },
    }, async (request) => {
      const body = request.body
      const em = ctx.orm.em.fork()
      const scope = scopeOf(request)
      const { id } = request.params
      await change(ctx, em, scope, id, body)
      return { ...serializeDetail(await getInvoice(ctx.orm.em.fork(), scope, id)), message: `invoice ${id} ${done}` }
    })
  }

  app.post(
    '/invoices/:id/payments',
    {
      schema: {
        response: { 201: ref('RecordedPayment') },
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
      const { id } = request.params
      const scope = scopeOf(request)
      const { payment } = await recordPayment(ctx, ctx.orm.em.fork(), scope, id, request.body, request.auth.userId)
      // The invoice as stored after the payment.
      const { invoice } = await getInvoice(ctx.orm.em.fork(), scope, id)
      void reply.code(201)
      return { ...serializePayment(payment), invoice: serializeInvoice(invoice) }
    },
  )
}
