// POST /invoices (manual ONE_OFF or CREDIT invoice) and PUT /invoices/{id} (user-facing fields).
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { dateTime, decimalString, idParams, metadataSchema, nonNegativeDecimalString } from '../http/schemas.js'
import { createManualInvoice, MANUAL_BILLING_REASONS, MANUAL_INVOICE_TYPES, updateInvoice } from './manual-invoices.js'
import { serializeInvoice } from './serialize.js'
import { getInvoice } from './service.js'
import { typed } from '../http/typed-routes.js'
import { ref } from '../http/response-schemas.js'

const tags = ['invoices']
const id = { type: 'string', minLength: 1, maxLength: 100 } as const

const lineItem = {
  type: 'object',
  required: ['display_name', 'amount'],
  additionalProperties: false,
  properties: {
    display_name: { type: 'string', minLength: 1, maxLength: 255 },
    amount: nonNegativeDecimalString,
    quantity: nonNegativeDecimalString,
    price_id: id,
    metadata: metadataSchema,
  },
} as const

const createBody = {
  type: 'object',
  required: ['customer_id', 'invoice_type', 'currency', 'line_items'],
  additionalProperties: false,
  properties: {
    customer_id: id,
    invoice_type: { type: 'string', enum: MANUAL_INVOICE_TYPES },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    line_items: { type: 'array', minItems: 1, maxItems: 500, items: lineItem },
    billing_reason: { type: 'string', enum: MANUAL_BILLING_REASONS },
    issue_date: dateTime,
    due_date: dateTime,
    description: { type: 'string', maxLength: 1000 },
    metadata: metadataSchema,
    idempotency_key: { type: 'string', minLength: 1, maxLength: 255 },
    // Flexprice's SDK requires these; they must equal what the line items make.
    subtotal: decimalString,
    total: decimalString,
    amount_due: decimalString,
  },
} as const

const updateBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    version: { type: 'integer', minimum: 1 },
    issue_date: dateTime,
    due_date: dateTime,
    description: { anyOf: [{ type: 'string', maxLength: 1000 }, { type: 'null' }] },
    metadata: metadataSchema,
  },
} as const

/** The invoice as GET /invoices/{id} shows it. */
async function invoiceWire(ctx: BillingContext, scope: Scope, invoiceId: string) {
  const detail = await getInvoice(ctx.orm.em.fork(), scope, invoiceId)
  return serializeInvoice(detail.invoice, detail.lines, detail)
}

export async function manualInvoiceRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/invoices', { schema: { response: { 201: ref('Invoice') }, tags, body: createBody } }, async (request, reply) => {
    const scope = scopeOf(request)
    const { invoice } = await createManualInvoice(ctx.orm.em.fork(), ctx.clock, scope, request.auth.userId, request.body)
    return reply.code(201).send(await invoiceWire(ctx, scope, invoice.id))
  })

  app.put('/invoices/:id', { schema: { response: { 200: ref('Invoice') }, tags, params: idParams, body: updateBody } }, async (request) => {
    const scope = scopeOf(request)
    const { id: invoiceId } = request.params
    await updateInvoice(ctx.orm.em.fork(), scope, request.auth.userId, invoiceId, request.body)
    return invoiceWire(ctx, scope, invoiceId)
  })
}
