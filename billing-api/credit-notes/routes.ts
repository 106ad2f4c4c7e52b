// Credit notes over HTTP, at Flexprice's paths: create, read, finalize, void.
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { idParams, metadataSchema, nonNegativeDecimalString } from '../http/schemas.js'
import { ref } from '../http/response-schemas.js'
import { typed } from '../http/typed-routes.js'
import { createCreditNote } from './create.js'
import { CREDIT_NOTE_REASONS } from './credit-note.entity.js'
import { getCreditNote } from './reads.js'
import { serializeCreditNote } from './serialize.js'
import { finalizeCreditNote, voidCreditNote } from './transitions.js'

const tags = ['credit-notes']
const id = { type: 'string', minLength: 1, maxLength: 100 } as const

const lineBody = {
  type: 'object',
  required: ['invoice_line_item_id', 'amount'],
  additionalProperties: false,
  properties: { invoice_line_item_id: id, amount: nonNegativeDecimalString, display_name: { type: 'string', minLength: 1, maxLength: 255 }, metadata: metadataSchema },
} as const

const createBody = {
  type: 'object',
  required: ['invoice_id', 'reason', 'line_items'],
  additionalProperties: false,
  properties: {
    invoice_id: id,
    reason: { type: 'string', enum: CREDIT_NOTE_REASONS },
    line_items: { type: 'array', minItems: 1, maxItems: 100, items: lineBody },
    memo: { type: 'string', maxLength: 1000 },
    credit_note_number: id,
    idempotency_key: { type: 'string', minLength: 1, maxLength: 255 },
    metadata: metadataSchema,
    process_credit_note: { type: 'boolean', default: false },
  },
} as const

export async function creditNoteRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const em = () => ctx.orm.em.fork()

  app.post('/creditnotes', { schema: { response: { 201: ref('CreditNote') }, tags, body: createBody } }, async (request, reply) => {
    const view = await createCreditNote(ctx, em(), scopeOf(request), request.auth.userId, request.body)
    return reply.code(201).send(serializeCreditNote(view))
  })

  app.get('/creditnotes/:id', { schema: { response: { 200: ref('CreditNote') }, tags, params: idParams } }, async (request) => {
    return serializeCreditNote(await getCreditNote(em(), scopeOf(request), request.params.id))
  })

  app.post('/creditnotes/:id/finalize', { schema: { response: { 200: ref('CreditNote') }, tags, params: idParams } }, async (request) => {
    return serializeCreditNote(await finalizeCreditNote(ctx, em(), scopeOf(request), request.auth.userId, request.params.id))
  })

  app.post('/creditnotes/:id/void', { schema: { response: { 200: ref('CreditNote') }, tags, params: idParams } }, async (request) => {
    return serializeCreditNote(await voidCreditNote(ctx, em(), scopeOf(request), request.auth.userId, request.params.id))
  })
}
