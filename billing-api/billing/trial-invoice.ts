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
import type { Scope } from '../db/scope.js'
import type { Invoice } from '../invoices/invoice.entity.js'
import { invoiceIdempotencyKey, findLiveInvoice } from '../invoices/index.js'
import type { Subscription } from '../subscriptions/subscription.entity.js'
import { writeSubscriptionInvoice } from './subscription-invoice-rows.js'
export function checkoutUrl(scope: Scope, invoiceId: string): string {
  return `https://checkout.meterline.invalid/${scope.tenant_id}/${scope.environment_id}/invoices/${invoiceId}`
}

export async function createTrialInvoice(tx: EntityManager, clock: Clock, sub: Subscription): Promise<Invoice> {
  if (!sub.trial_start || !sub.trial_end) throw new Error(`subscription ${sub.id} has no trial`)
  const scope: Scope = { tenant_id: sub.tenant_id, environment_id: sub.environment_id }
  const key = invoiceIdempotencyKey(sub.id, 'SUBSCRIPTION_TRIAL_START', sub.trial_start, sub.trial_end)
  const existing = await findLiveInvoice(tx, scope, key)
  if (existing) return existing
  const manual = sub.collection_method === 'send_invoice'
  const now = clock.now()
  const id = newId('inv')
  const { invoice } = writeSubscriptionInvoice(tx, {
    id, subscription: sub, billingReason: 'SUBSCRIPTION_TRIAL_START', periodStart: sub.trial_start, periodEnd: sub.trial_end,
    idempotencyKey: key, subtotal: '0', total: '0', now, description: 'Trial',
    metadata: manual ? {} : { checkout_url: checkoutUrl(scope, id) },
    zeroAmount: manual ? 'skip' : 'draft', skippedPaidAt: now,
  }, [])
  return invoice
}
