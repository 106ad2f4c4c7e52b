// Invoice payment status: the documented transition table and the payment arithmetic.
// Pure: no I/O, no clock, no ORM.
//
// The spec lists the states but not the moves between them; this table is ours:
//
// | from               | allowed next states                                           |
// |--------------------|---------------------------------------------------------------|
// | INITIATED          | PENDING, PROCESSING, SUCCEEDED, OVERPAID, FAILED               |
// | PENDING            | PENDING (a partial payment), PROCESSING, SUCCEEDED, OVERPAID, FAILED |
// | PROCESSING         | PENDING (a partial capture), SUCCEEDED, OVERPAID, FAILED       |
// | FAILED             | PENDING, PROCESSING, SUCCEEDED, OVERPAID (a retried payment), FAILED (a retry failed again) |
// | SUCCEEDED          | PARTIALLY_REFUNDED, REFUNDED                                   |
// | OVERPAID           | SUCCEEDED (the excess is refunded), PARTIALLY_REFUNDED, REFUNDED |
// | PARTIALLY_REFUNDED | PARTIALLY_REFUNDED (another partial refund), REFUNDED          |
// | REFUNDED           | none (terminal)                                               |
//
// Staying in a state counts as a transition only where the table lists it. A partially paid
// invoice stays PENDING: there is no PARTIALLY_PAID state, amount_paid and amount_remaining
// tell how far it is paid. Failures (payments/payment-failures.ts) are checked against the
// same table. A refund (payments/refund-math.ts) starts from SUCCEEDED, OVERPAID or
// PARTIALLY_REFUNDED and follows the same moves, plus OVERPAID -> OVERPAID for a refund of
// part of the excess (canRefundTransition); a payment never makes OVERPAID -> OVERPAID.
import { D, toMoneyString } from '../pricing/index.js'
import type { PaymentStatus } from './invoice.entity.js'

export const PAYMENT_STATUSES: readonly PaymentStatus[] = [
  'INITIATED', 'PENDING', 'PROCESSING', 'SUCCEEDED', 'OVERPAID', 'FAILED', 'REFUNDED', 'PARTIALLY_REFUNDED',
]

const TRANSITIONS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  INITIATED: ['PENDING', 'PROCESSING', 'SUCCEEDED', 'OVERPAID', 'FAILED'],
  PENDING: ['PENDING', 'PROCESSING', 'SUCCEEDED', 'OVERPAID', 'FAILED'],
  PROCESSING: ['PENDING', 'SUCCEEDED', 'OVERPAID', 'FAILED'],
  FAILED: ['PENDING', 'PROCESSING', 'SUCCEEDED', 'OVERPAID', 'FAILED'],
  SUCCEEDED: ['PARTIALLY_REFUNDED', 'REFUNDED'],
  OVERPAID: ['SUCCEEDED', 'PARTIALLY_REFUNDED', 'REFUNDED'],
  PARTIALLY_REFUNDED: ['PARTIALLY_REFUNDED', 'REFUNDED'],
  REFUNDED: [],
}

export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  return TRANSITIONS[from]?.includes(to) ?? false
}

const REFUNDABLE: readonly PaymentStatus[] = ['SUCCEEDED', 'OVERPAID', 'PARTIALLY_REFUNDED']

export function canRefundTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  if (!REFUNDABLE.includes(from)) return false
  return canTransition(from, to) || (from === 'OVERPAID' && to === 'OVERPAID')
}

export interface PaymentTotals {
  total: string
  amount_paid: string
  currency: string
}

export interface PaymentOutcome {
  amount_paid: string
  amount_remaining: string
  overpaid_amount: string
  payment_status: PaymentStatus
  /** true when this payment completes the invoice (SUCCEEDED or OVERPAID) */
  fully_paid: boolean
}

/**
 * The invoice's amounts after a payment of `amount` (> 0):
 * amount_paid += amount; amount_remaining = max(total - amount_paid, 0);
 * overpaid_amount = max(amount_paid - total, 0); status SUCCEEDED when exactly paid,
 * OVERPAID when over, PENDING while partially paid. Amounts print in the currency's decimals.
 */
export function applyPayment(inv: PaymentTotals, amount: string): PaymentOutcome {
  const total = D(inv.total)
  const paid = D(inv.amount_paid).plus(D(amount))
  const diff = paid.minus(total)
  const payment_status: PaymentStatus = diff.isZero() ? 'SUCCEEDED' : diff.isPositive() ? 'OVERPAID' : 'PENDING'
  return {
    amount_paid: toMoneyString(paid, inv.currency),
    amount_remaining: toMoneyString(D.max(total.minus(paid), 0), inv.currency),
    overpaid_amount: toMoneyString(D.max(diff, 0), inv.currency),
    payment_status,
    fully_paid: payment_status !== 'PENDING',
  }
}
