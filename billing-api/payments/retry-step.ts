// One dunning retry (a job of retry-queue.ts) of an invoice whose payment failed:
// - the invoice is no longer FINALIZED and FAILED (paid since, voided, refunded), or a newer
//   failure has its own retry: nothing happens ('stopped'). This is how the schedule stops on
//   success or void.
// - the environment has a Stripe connection and the invoice is linked there: Stripe is asked
//   to charge it (invoices.pay). Paid: the payment is recorded (invoices/payments.ts) ->
//   'paid'. Declined: a new failure is recorded (payment-failures.ts), which schedules the
//   next retry -> 'failed'. Stripe unreachable: the job throws and BullMQ retries it.
// - otherwise nothing can charge the customer here: `invoice.payment_retry_due` is published
//   so the tenant's webhook retries it ('notified'); the tenant reports the outcome through
//   the payments or payment_failures endpoint, which continues the schedule.
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { findMapping, findOpenConnection, providerFor } from '../integrations/index.js'
import { InvoiceSchema } from '../invoices/invoice.entity.js'
import { invoiceEventPayload, lockInvoice, recordPayment } from '../invoices/index.js'
import type { PaymentRetryJob } from '../queues.js'
import { PaymentFailureSchema } from './payments.entity.js'
import { recordPaymentFailure } from './payment-failures.js'

export type RetryOutcome = 'stopped' | 'paid' | 'failed' | 'notified'

const ACTOR = 'system:dunning'

export async function runPaymentRetry(ctx: BillingContext, job: PaymentRetryJob): Promise<RetryOutcome> {
  const scope: Scope = { tenant_id: job.tenant_id, environment_id: job.environment_id }
  const em = ctx.orm.em.fork()
  const invoice = await em.findOne(InvoiceSchema, { id: job.invoice_id, ...scope, status: { $ne: 'deleted' } })
  if (!invoice || invoice.invoice_status !== 'FINALIZED' || invoice.payment_status !== 'FAILED') return 'stopped'
  if ((await em.count(PaymentFailureSchema, { ...scope, invoice_id: invoice.id })) !== job.attempt) return 'stopped'

  const provider = providerFor(ctx.config, 'stripe')
  const conn = await findOpenConnection(ctx.config, em, scope, provider.type)
  const mapping = conn ? await findMapping(em, scope, 'invoice', invoice.id, provider.type) : null
  if (conn && mapping && provider.collectInvoice) {
    const result = await provider.collectInvoice(conn, mapping.provider_entity_id, `meterline-dunning-${invoice.id}-${job.attempt}`)
    if (result.paid) {
      await recordPayment(ctx, em, scope, invoice.id, {
        amount: invoice.amount_remaining, reference: `${provider.type}:${mapping.provider_entity_id}`, idempotency_key: `dunning:${job.attempt}:paid`,
      }, ACTOR)
      return 'paid'
    }
    await recordPaymentFailure(ctx, em, scope, invoice.id, {
      failure_code: result.failure_code, reason: result.reason, idempotency_key: `dunning:${job.attempt}`,
    }, ACTOR)
    return 'failed'
  }
  return em.transactional(async (tx) => {
    const locked = await lockInvoice(tx, scope, invoice.id)
    if (locked.payment_status !== 'FAILED') return 'stopped'
    publishSystemEvent(tx, scope, {
      event_name: 'invoice.payment_retry_due', entity_type: 'invoice', entity_id: locked.id,
      payload: { ...invoiceEventPayload(locked), attempt: job.attempt },
    })
    await tx.flush()
    return 'notified'
  })
}
