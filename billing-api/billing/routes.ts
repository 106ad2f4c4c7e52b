// The billing use cases' own invoice routes: a preview of a subscription's period invoice,
// recomputation of a DRAFT or SKIPPED invoice (sync, or as a queued job: compute-job.ts) and
// the status of such a job. The invoice record's routes live in invoices/.
import type { FastifyInstance } from 'fastify'
import { ServiceUnavailableError, ValidationError } from '../../platform/errors.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { dateTime, idParams } from '../http/schemas.js'
import { finalizeLockedInvoice, serializeInvoice, getInvoice } from '../invoices/index.js'
import { getSubscription } from '../subscriptions/index.js'
import { enqueueInvoiceCompute } from './compute-job.js'
import { serializePreviewDocument } from './preview-document.js'
import type { Scope } from '../db/scope.js'
import { recomputeInvoice } from './recompute.js'
import { computeSubscriptionInvoice, type ComputedInvoice } from './subscription-invoice.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { toMoneyString } from '../pricing/index.js'
import { ref } from '../http/response-schemas.js'
import { computeJobSchema, computeQueuedSchema, invoicePreviewSchema } from './response-schemas.js'

const changeBody = { type: 'object', additionalProperties: false, properties: { version: { type: 'integer', minimum: 1 } } } as const

const workflowParams = {
  type: 'object',
  required: ['workflow_id'],
  properties: { workflow_id: { type: 'string', minLength: 1, maxLength: 100 } },
} as const

function serializePreview(c: ComputedInvoice) {
  return {
    subscription_id: c.subscription.id, customer_id: c.subscription.customer_id, currency: c.subscription.currency,
    billing_reason: c.reason, invoice_status: 'DRAFT', period_start: c.periodStart.toISOString(), period_end: c.periodEnd.toISOString(),
    // Taxes and credits are applied at finalization only, so a preview shows none.
    subtotal: c.subtotal, total_discount: c.total_discount, total_tax: toMoneyString('0', c.subscription.currency), total: c.total, amount_due: c.total,
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

const previewBody = {
  type: 'object',
  required: ['subscription_id'],
  additionalProperties: false,
  properties: { subscription_id: { type: 'string', minLength: 1, maxLength: 100 }, period_start: dateTime, period_end: dateTime },
} as const

/** The subscription's invoice for [period_start, period_end), its current period by default, computed and not stored. */
async function computePeriodPreview(ctx: BillingContext, scope: Scope, body: { subscription_id: string; period_start?: string; period_end?: string }): Promise<ComputedInvoice> {
  const em = ctx.orm.em.fork()
  const { subscription } = await getSubscription(em, scope, body.subscription_id)
  const start = body.period_start ? new Date(body.period_start) : subscription.current_period_start
  const end = body.period_end ? new Date(body.period_end) : subscription.current_period_end
  if (!(start < end)) throw new ValidationError('period_start must be before period_end', 'period_start')
  return computeSubscriptionInvoice(ctx, em, subscription, start, end, 'SUBSCRIPTION_CYCLE')
}

export async function billingRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/invoices/internal/preview', { config: READS, schema: { response: { 200: invoicePreviewSchema }, tags: ['invoices'], body: previewBody } }, async (request) => {
    return serializePreview(await computePeriodPreview(ctx, scopeOf(request), request.body))
  })

  // Flexprice's preview: the same computation in the Invoice shape (preview-document.ts).
  app.post('/invoices/preview', { config: READS, schema: { response: { 200: ref('InvoicePreviewDocument') }, tags: ['invoices'], body: previewBody } }, async (request) => {
    const scope = scopeOf(request)
    return serializePreviewDocument(await computePeriodPreview(ctx, scope, request.body), scope, ctx.clock.now())
  })

  // Recomputation of a DRAFT or SKIPPED invoice (recompute.ts). sync=true recomputes in the
  // request and answers the recomputed invoice.
  app.post('/invoices/:id/compute', {
    schema: {
      response: { 200: ref('Invoice'), 202: computeQueuedSchema },
      tags: ['invoices'], params: idParams, body: changeBody,
      querystring: { type: 'object', additionalProperties: false, properties: { sync: { type: 'boolean', default: false } } },
    },
    preValidation: async (request) => {
      request.body ??= {}
    },
  }, async (request, reply) => {
    const { id } = request.params
    const { sync } = request.query
    const scope = scopeOf(request)
    if (!sync) return reply.code(202).send(await enqueueInvoiceCompute(ctx, ctx.orm.em.fork(), scope, id, request.body))
    await recomputeInvoice(ctx, ctx.orm.em.fork(), scope, id, request.body)
    const d = await getInvoice(ctx.orm.em.fork(), scope, id)
    return serializeInvoice(d.invoice, d.lines, d)
  })

  // Flexprice's name for the synchronous recomputation, finalizing the result unless finalize=false
  // (the SDK documents true as the default). Both in one transaction: a finalization that fails
  // leaves the invoice as it was. A recomputation that makes it SKIPPED is never finalized.
  app.post('/invoices/:id/recalculate', {
    schema: {
      response: { 200: ref('Invoice') },
      tags: ['invoices'], params: idParams,
      querystring: { type: 'object', additionalProperties: false, properties: { finalize: { type: 'boolean', default: true } } },
    },
  }, async (request) => {
    const { id } = request.params
    const scope = scopeOf(request)
    await ctx.orm.em.fork().transactional(async (tx) => {
      const invoice = await recomputeInvoice(ctx, tx, scope, id)
      if (request.query.finalize && invoice.invoice_status === 'DRAFT') await finalizeLockedInvoice(ctx, tx, invoice)
    })
    const d = await getInvoice(ctx.orm.em.fork(), scope, id)
    return serializeInvoice(d.invoice, d.lines, d)
  })

  app.get('/invoices/compute-jobs/:workflow_id', { schema: { response: { 200: computeJobSchema }, tags: ['invoices'], params: workflowParams } }, async (request) => {
    if (!ctx.invoiceCompute) throw new ServiceUnavailableError('the invoice compute queue is not configured in this process')
    return ctx.invoiceCompute.status(scopeOf(request), request.params.workflow_id)
  })
}
