// The idempotency key of an invoice a subscription's billing writes: one live invoice per
// subscription, reason and period (a partial unique index enforces it).
import { minuteKey } from '../periods/periods.js'

export type BillingReason = 'SUBSCRIPTION_CREATE' | 'SUBSCRIPTION_CYCLE' | 'PRORATION' | 'SUBSCRIPTION_TRIAL_START' | 'AUTO_INVOICE_THRESHOLD'

export function invoiceIdempotencyKey(subscriptionId: string, reason: BillingReason, start: Date, end: Date): string {
  return `${subscriptionId}:${reason}:${minuteKey(start)}:${minuteKey(end)}`
}
