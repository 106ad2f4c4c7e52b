// Flexprice's payments resource (/payments) over the payments recorded against invoices: a
// create records a payment on its destination invoice (the use case of POST
// /invoices/{id}/payments), and the reads and the metadata update are of those records.
// Meterline records payments that were made (offline, or by a provider whose webhook reports
// them); it does not charge a payment method. So a create takes destination_type INVOICE and
// payment_method_type OFFLINE only, is applied at once (process_payment true), and a recorded
// payment is neither processed again nor deleted (its amount is on the invoice): both answer 400.
import type { FastifyInstance } from 'fastify'
import { InvalidOperationError, ValidationError } from '../../platform/errors.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import type { EntityManager } from '@mikro-orm/postgresql'
import { findInScope } from '../db/scoped-records.js'
import { decimalString, idParams, listResponse, metadataSchema, paginationQuery, type Page } from '../http/schemas.js'
import { typed } from '../http/typed-routes.js'
import { deletedMessage, pageOf, ref } from '../http/response-schemas.js'
import { InvoiceSchema } from './invoice.entity.js'
import { InvoicePaymentSchema, type InvoicePayment } from './payment.entity.js'
import { recordPayment } from './payments.js'
import { serializeInvoice, serializePayment } from './serialize.js'
import { getInvoice } from './service.js'
import { D } from '../pricing/index.js'

const id = { type: 'string', minLength: 1, maxLength: 100 } as const

const createBody = {
  type: 'object',
  required: ['amount', 'currency', 'destination_id', 'destination_type', 'payment_method_type'],
  additionalProperties: false,
  properties: {
    amount: decimalString,
    currency: { type: 'string', minLength: 3, maxLength: 3 },
    destination_id: id,
    destination_type: { type: 'string', enum: ['INVOICE'] },
    payment_method_type: { type: 'string', enum: ['OFFLINE'] },
    idempotency_key: { type: 'string', minLength: 1, maxLength: 255 },
    metadata: metadataSchema,
    process_payment: { type: 'boolean', enum: [true] },
    save_card_and_make_default: { type: 'boolean', enum: [false] },
  },
} as const

const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...paginationQuery, destination_id: id, destination_type: { type: 'string', enum: ['INVOICE'] } },
} as const

const updateBody = { type: 'object', additionalProperties: false, properties: { metadata: metadataSchema } } as const

/**
 * A payment in Flexprice's shape. One recorded through the API is OFFLINE; one a provider
 * reported (recorded by `system:<provider>`, reference `<provider>:<its id>`) names its gateway.
 */
function wire(p: InvoicePayment, invoiceNumber: string | null) {
  const byProvider = p.created_by?.startsWith('system:') && p.reference?.includes(':')
  const [gateway, gatewayId] = byProvider ? [p.reference!.slice(0, p.reference!.indexOf(':')), p.reference!.slice(p.reference!.indexOf(':') + 1)] : [null, null]
  return {
    ...serializePayment(p),
    destination_id: p.invoice_id, destination_type: 'INVOICE', invoice_number: invoiceNumber,
    payment_method_type: byProvider ? null : 'OFFLINE', payment_gateway: gateway, gateway_payment_id: gatewayId,
    payment_status: 'SUCCEEDED', succeeded_at: p.paid_at.toISOString(), failed_at: null, refunded_at: null, error_message: null,
    payment_method_id: null, payment_url: null, gateway_tracking_id: null, gateway_metadata: null,
    attempts: null, track_attempts: false, save_card_and_make_default: false,
  }
}

async function numbers(em: EntityManager, scope: Scope, payments: InvoicePayment[]): Promise<Map<string, string | null>> {
  const invoices = await em.find(InvoiceSchema, { ...scope, id: { $in: [...new Set(payments.map((p) => p.invoice_id))] } }, { fields: ['id', 'invoice_number'] })
  return new Map(invoices.map((i) => [i.id, i.invoice_number ?? null]))
}

export async function paymentRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const tags = ['payments']
  const em = () => ctx.orm.em.fork()
  const one = async (m: EntityManager, scope: Scope, p: InvoicePayment) => wire(p, (await numbers(m, scope, [p])).get(p.invoice_id) ?? null)

  app.post('/payments', { schema: { response: { 201: ref('Payment') }, tags, body: createBody } }, async (request, reply) => {
    const scope = scopeOf(request)
    const body = request.body
    const m = em()
    const invoice = await findInScope(m, InvoiceSchema, scope, body.destination_id, 'invoice')
    if (body.currency.toUpperCase() !== invoice.currency.toUpperCase()) {
      throw new ValidationError(`currency must be the invoice's (${invoice.currency})`, 'currency')
    }
    const { payment } = await recordPayment(ctx, em(), scope, invoice.id, {
      amount: body.amount, idempotency_key: body.idempotency_key, metadata: body.metadata,
    }, request.auth.userId)
    return reply.code(201).send(await one(m, scope, payment))
  })

  app.get('/payments', { schema: { response: { 200: pageOf(ref('Payment')) }, tags, querystring: listQuery } }, async (request) => {
    const scope = scopeOf(request)
    const q = request.query as Page & { destination_id?: string }
    const m = em()
    const where = { ...scope, status: { $ne: 'deleted' as const }, ...(q.destination_id ? { invoice_id: q.destination_id } : {}) }
    const [items, total] = await m.findAndCount(InvoicePaymentSchema, where, { orderBy: { created_at: 'asc', id: 'asc' }, limit: q.limit, offset: q.offset })
    const byInvoice = await numbers(m, scope, items)
    return listResponse(items.map((p) => wire(p, byInvoice.get(p.invoice_id) ?? null)), total, q)
  })

  app.get('/payments/:id', { schema: { response: { 200: ref('Payment') }, tags, params: idParams } }, async (request) => {
    const scope = scopeOf(request)
    const m = em()
    return one(m, scope, await findInScope(m, InvoicePaymentSchema, scope, request.params.id, 'payment'))
  })

  app.put('/payments/:id', { schema: { response: { 200: ref('Payment') }, tags, params: idParams, body: updateBody } }, async (request) => {
    const scope = scopeOf(request)
    const m = em()
    const payment = await findInScope(m, InvoicePaymentSchema, scope, request.params.id, 'payment')
    if (request.body.metadata !== undefined) payment.metadata = request.body.metadata
    payment.updated_by = request.auth.userId
    await m.flush()
    return one(m, scope, payment)
  })

  // Flexprice's "update payment status": marking an invoice SUCCEEDED records a payment of what
  // is left to pay (amount, when sent, must be that). Any other status follows from the
  // payments recorded and is not set by hand (400).
  app.put('/invoices/:id/payment', {
    schema: {
      response: { 200: ref('Invoice') }, tags: ['invoices'], params: idParams,
      body: { type: 'object', required: ['payment_status'], additionalProperties: false, properties: { payment_status: { type: 'string', minLength: 1, maxLength: 50 }, amount: decimalString } },
    },
  }, async (request) => {
    const scope = scopeOf(request)
    const { id: invoiceId } = request.params
    const { payment_status: status, amount } = request.body
    if (status !== 'SUCCEEDED') throw new ValidationError('payment_status: only SUCCEEDED can be set (it records a payment of what is left to pay); other statuses follow from the payments recorded', 'payment_status')
    const invoice = await findInScope(em(), InvoiceSchema, scope, invoiceId, 'invoice')
    const remaining = D(invoice.amount_remaining)
    if (amount !== undefined && !D(amount).eq(remaining)) throw new ValidationError(`amount must be what is left to pay (${invoice.amount_remaining} ${invoice.currency})`, 'amount')
    if (remaining.lte(0)) throw new InvalidOperationError(`invoice ${invoiceId} has nothing left to pay`)
    await recordPayment(ctx, em(), scope, invoiceId, { amount: invoice.amount_remaining, version: invoice.version }, request.auth.userId)
    const d = await getInvoice(em(), scope, invoiceId)
    return serializeInvoice(d.invoice, d.lines, d)
  })

  // A recorded payment was made and is on its invoice: there is nothing to process or undo.
  app.post('/payments/:id/process', { schema: { response: { 200: ref('Payment') }, tags, params: idParams } }, async (request) => {
    const payment = await findInScope(em(), InvoicePaymentSchema, scopeOf(request), request.params.id, 'payment')
    throw new InvalidOperationError(`payment ${payment.id} is SUCCEEDED: a recorded payment is applied when it is recorded`)
  })
  app.delete('/payments/:id', { schema: { response: { 200: deletedMessage }, tags, params: idParams } }, async (request) => {
    const payment = await findInScope(em(), InvoicePaymentSchema, scopeOf(request), request.params.id, 'payment')
    throw new InvalidOperationError(`payment ${payment.id} is on invoice ${payment.invoice_id}: a recorded payment is not deleted (a refund is POST /invoices/{id}/refunds)`)
  })
}
