// The zero-amount invoice of a trial (spec: transitions, trial-start invoice), billing reason
// SUBSCRIPTION_TRIAL_START for [trial_start, trial_end), written in the caller's transaction.
// - send_invoice (the spec's manual collection): nothing to pay, so SKIPPED and SUCCEEDED
//   (paid_at = now).
// - charge_automatically: DRAFT with payment PENDING until a card is captured; the checkout
//   link is a placeholder until a payment provider is integrated:
//   metadata.checkout_url = https://checkout.meterline.invalid/<tenant_id>/<environment_id>/invoices/<invoice_id>
// Idempotent per subscription and trial window like every subscription invoice.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../auth/authenticate.js'
import { publishSystemEvent } from '../events/publish.js'
import { InvoiceSchema, type Invoice } from '../invoices/invoice.entity.js'
import { invoiceEventPayload } from '../invoices/serialize.js'
import { invoiceIdempotencyKey } from '../invoices/service.js'
import type { Subscription } from './subscription.entity.js'
import { invoiceParties } from './hierarchy.js'

export function checkoutUrl(scope: Scope, invoiceId: string): string {
  return `https://checkout.meterline.invalid/${scope.tenant_id}/${scope.environment_id}/invoices/${invoiceId}`
}

export async function createTrialInvoice(tx: EntityManager, clock: Clock, sub: Subscription): Promise<Invoice> {
  if (!sub.trial_start || !sub.trial_end) throw new Error(`subscription ${sub.id} has no trial`)
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const key = invoiceIdempotencyKey(sub.id, 'SUBSCRIPTION_TRIAL_START', sub.trial_start, sub.trial_end)
  const existing = await tx.findOne(InvoiceSchema, { ...scope, idempotency_key: key, invoice_status: { $ne: 'VOIDED' }, status: { $ne: 'deleted' } })
  if (existing) return existing
  const manual = sub.collection_method === 'send_invoice'
  const now = clock.now()
  const id = newId('inv')
  const invoice = tx.create(InvoiceSchema, {
    id, ...scope, ...invoiceParties(sub), // hierarchy: delegated invoicing
    subscription_id: sub.id, invoice_type: 'SUBSCRIPTION',
    invoice_status: manual ? 'SKIPPED' : 'DRAFT', payment_status: manual ? 'SUCCEEDED' : 'PENDING', currency: sub.currency,
    billing_reason: 'SUBSCRIPTION_TRIAL_START', billing_period: sub.billing_period, period_start: sub.trial_start, period_end: sub.trial_end,
    subtotal: '0', total_discount: '0', total_tax: '0', total_prepaid_credits_applied: '0', adjustment_amount: '0',
    total: '0', amount_due: '0', amount_paid: '0', amount_remaining: '0', overpaid_amount: '0', refunded_amount: '0',
    invoice_number: null, billing_sequence: null, idempotency_key: key, description: 'Trial', issue_date: null, due_date: null,
    finalized_at: null, paid_at: manual ? now : null, voided_at: null, last_computed_at: now, status: 'published',
    metadata: manual ? {} : { checkout_url: checkoutUrl(scope, id) }, created_by: null, updated_by: null,
  } as any)
  if (!manual) publishSystemEvent(tx, scope, { event_name: 'invoice.drafted', entity_type: 'invoice', entity_id: invoice.id, payload: invoiceEventPayload(invoice) })
  return invoice
}
