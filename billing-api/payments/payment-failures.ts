// Recording a failed payment attempt of a FINALIZED, unpaid invoice: payment_status becomes
// FAILED (the moves are checked by invoices/payment-status.ts), `invoice.payment_failed` is
// published, and the dunning schedule's next retry is queued as a delayed BullMQ job
// (retry-queue.ts). Everything happens in one transaction that row-locks the invoice; the job
// is queued last inside it, so a Redis failure rolls the failure back (503) and a rollback after
// the job was queued leaves a job that finds nothing to retry (retry-step.ts checks the state).
// A repeated idempotency_key answers the failure it recorded first and changes nothing.
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvalidOperationError, ServiceUnavailableError } from '../../platform/errors.js'
import { assertVersion } from './version.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext, PaymentFailureReporting } from '../context.js'
import { publishSystemEvent } from '../events/index.js'
import type { Invoice } from '../invoices/invoice.entity.js'
import { canTransition, invoiceEventPayload, lockInvoice, type ChangeOptions } from '../invoices/index.js'
import { nextRetryAt } from './dunning-schedule.js'
import { PaymentFailureSchema, type PaymentFailure } from './payments.entity.js'
import { serializeFailure } from './serialize.js'

export interface PaymentFailureInput extends ChangeOptions {
  failure_code?: string
  reason?: string
  failed_at?: string
  idempotency_key?: string
}

export interface FailureResult {
  failure: PaymentFailure
  invoice: Invoice
  /** true when the idempotency key had been used: nothing was applied */
  replayed: boolean
}

export async function recordPaymentFailure(
  ctx: BillingContext, em: EntityManager, scope: Scope, invoiceId: string, input: PaymentFailureInput, userId: string | null,
): Promise<FailureResult> {
  return em.transactional(async (tx) => {
    const invoice = await lockInvoice(tx, scope, invoiceId)
    if (input.idempotency_key !== undefined) {
      const earlier = await tx.findOne(PaymentFailureSchema, { ...scope, invoice_id: invoiceId, idempotency_key: input.idempotency_key })
      if (earlier) return { failure: earlier, invoice, replayed: true }
    }
    // The version is checked only for a new failure: a retried request must find its first answer.
    assertVersion(invoice, input)
    if (invoice.invoice_status !== 'FINALIZED') {
      throw new InvalidOperationError(`invoice ${invoiceId} is ${invoice.invoice_status}; payment failures are recorded on FINALIZED invoices only`)
    }
    if (!canTransition(invoice.payment_status, 'FAILED')) {
      throw new InvalidOperationError(`invoice ${invoiceId} is ${invoice.payment_status}; a failed payment cannot make it FAILED`)
    }
    const previous = await tx.count(PaymentFailureSchema, { ...scope, invoice_id: invoiceId })
    const attempt = previous + 1
    const now = ctx.clock.now()
    const failedAt = input.failed_at ? new Date(input.failed_at) : now
    const retryAt = nextRetryAt(ctx.config.paymentRetryScheduleMs, attempt, failedAt)
    const failure = tx.create(PaymentFailureSchema, {
      id: newId('payfail'), ...scope, invoice_id: invoiceId, attempt, failure_code: input.failure_code ?? null, reason: input.reason ?? null,
      idempotency_key: input.idempotency_key ?? null, failed_at: failedAt, next_retry_at: retryAt,
      status: 'published', metadata: {}, created_by: userId, updated_by: userId,
    })
    const from = invoice.payment_status
    invoice.payment_status = 'FAILED'
    invoice.updated_by = userId
    publishSystemEvent(tx, scope, {
      event_name: 'invoice.payment_failed', entity_type: 'invoice', entity_id: invoice.id,
      payload: { ...invoiceEventPayload(invoice), previous_payment_status: from, failure: serializeFailure(failure), retries_exhausted: retryAt === null },
    })
    await tx.flush()
    if (retryAt) {
      if (!ctx.paymentRetries) throw new ServiceUnavailableError('the payment retry queue is not configured in this process')
      await ctx.paymentRetries.schedule({ ...scope, invoice_id: invoiceId, attempt }, Math.max(retryAt.getTime() - now.getTime(), 0))
    }
    return { failure, invoice, replayed: false }
  })
}

/** The context port through which inbound provider events record failures (context.ts). */
export const paymentFailureReporting: PaymentFailureReporting = {
  async record(ctx, tx, scope, invoiceId, input, actor) {
    const { failure } = await recordPaymentFailure(ctx, tx, scope, invoiceId, input, actor)
    return { attempt: failure.attempt }
  },
}
