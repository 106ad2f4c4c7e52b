// HTTP for refunds, failed payment attempts, payment links and an invoice's payment history.
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { findInScope } from '../db/scoped-records.js'
import { dateTime, decimalString, idParams } from '../http/schemas.js'
import { InvoiceSchema } from '../invoices/invoice.entity.js'
import { InvoicePaymentSchema } from '../invoices/payment.entity.js'
import { getInvoice, serializeInvoice, serializePayment } from '../invoices/index.js'
import { InvoiceRefundSchema, PaymentFailureSchema } from './payments.entity.js'
import { recordPaymentFailure } from './payment-failures.js'
import { createPaymentLink } from './payment-link.js'
import { refundInvoice } from './refunds.js'
import { serializeFailure, serializeRefund } from './serialize.js'
import { typed } from '../http/typed-routes.js'
import { failureResultSchema, invoicePaymentsSchema, paymentLinkSchema, refundResultSchema } from './response-schemas.js'

const versionProperty = { version: { type: 'integer', minimum: 1 } } as const
const key = { type: 'string', minLength: 1, maxLength: 255 } as const
const shortText = { type: 'string', minLength: 1, maxLength: 1000 } as const

export async function paymentRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/invoices/:id/refunds', {
    schema: {
      tags: ['invoices'], params: idParams,
      body: {
        type: 'object', required: ['amount'], additionalProperties: false,
        properties: { amount: decimalString, payment_id: key, reason: shortText, reference: key, idempotency_key: key, ...versionProperty },
      },
      response: { 200: refundResultSchema, 201: refundResultSchema },
    },
  }, async (request, reply) => {
    const { id } = request.params
    const scope = scopeOf(request)
    const result = await refundInvoice(ctx, ctx.orm.em.fork(), scope, id, request.body, request.auth.userId)
    const invoice = (await getInvoice(ctx.orm.em.fork(), scope, id)).invoice
    const note = result.credit_note ? await getInvoice(ctx.orm.em.fork(), scope, result.credit_note.id) : null
    void reply.code(result.replayed ? 200 : 201)
    return {
      refund: serializeRefund(result.refund), invoice: serializeInvoice(invoice),
      credit_note: note ? serializeInvoice(note.invoice, note.lines) : null, replayed: result.replayed,
    }
  })

  app.post('/invoices/:id/payment_failures', {
    schema: {
      tags: ['invoices'], params: idParams,
      body: {
        type: 'object', additionalProperties: false,
        properties: { failure_code: { type: 'string', minLength: 1, maxLength: 100 }, reason: shortText, failed_at: dateTime, idempotency_key: key, ...versionProperty },
      },
      response: { 200: failureResultSchema, 201: failureResultSchema },
    },
    preValidation: async (request) => {
      request.body ??= {}
    },
  }, async (request, reply) => {
    const { id } = request.params
    const scope = scopeOf(request)
    const result = await recordPaymentFailure(ctx, ctx.orm.em.fork(), scope, id, request.body, request.auth.userId)
    const invoice = (await getInvoice(ctx.orm.em.fork(), scope, id)).invoice
    void reply.code(result.replayed ? 200 : 201)
    return { failure: serializeFailure(result.failure), invoice: serializeInvoice(invoice), replayed: result.replayed }
  })

  app.post('/invoices/:id/payment_link', {
    schema: {
      tags: ['invoices'], params: idParams,
      body: {
        type: 'object', required: ['success_url'], additionalProperties: false,
        properties: { success_url: { type: 'string', format: 'uri', maxLength: 2000 }, cancel_url: { type: 'string', format: 'uri', maxLength: 2000 } },
      },
      response: { 201: paymentLinkSchema },
    },
  }, async (request, reply) => {
    const { id } = request.params
    const link = await createPaymentLink(ctx, scopeOf(request), id, request.body, request.auth.userId)
    void reply.code(201)
    return link
  })

  // The invoice's payment history: payments, refunds and failed attempts, oldest first.
  app.get('/invoices/:id/payments', {
    schema: { tags: ['invoices'], params: idParams, response: { 200: invoicePaymentsSchema } },
  }, async (request) => {
    const { id } = request.params
    const scope = scopeOf(request)
    const em = ctx.orm.em.fork()
    await findInScope(em, InvoiceSchema, scope, id, 'invoice')
    const where = { ...scope, invoice_id: id }
    const order = { orderBy: { created_at: 'asc', id: 'asc' } } as const
    const [payments, refunds, failures] = await Promise.all([
      em.find(InvoicePaymentSchema, where, order), em.fork().find(InvoiceRefundSchema, where, order), em.fork().find(PaymentFailureSchema, where, order),
    ])
    return { invoice_id: id, payments: payments.map(serializePayment), refunds: refunds.map(serializeRefund), failures: failures.map(serializeFailure) }
  })
}
