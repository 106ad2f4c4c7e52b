// Invoice payment status: the documented transition table and the payment arithmetic.
// Pure: no I/O, no clock, no ORM.
//
// The spec lists the states but not the moves between them; this table is ours:
//
// | from               | allowed next states                                           |
// |--------------------|---------------------------------------------------------------|
// | INITIATED          | PENDING, PROCESSING, SUCCEEDED, OVERPAID, FAILED               |
// | PENDING            | PENDING (a partial payment), PROCESSING, SUCCEEDED, OVERPAID, FAILED, PARTIALLY_REFUNDED (*) |
// | PROCESSING         | PENDING (a partial capture), SUCCEEDED, OVERPAID, FAILED, PARTIALLY_REFUNDED (*) |
// | FAILED             | PENDING, PROCESSING, SUCCEEDED, OVERPAID (a retried payment), FAILED (a retry failed again), PARTIALLY_REFUNDED (*) |
// | SUCCEEDED          | PARTIALLY_REFUNDED, REFUNDED                                   |
// | OVERPAID           | SUCCEEDED (the excess is refunded), PARTIALLY_REFUNDED, REFUNDED |
// | PARTIALLY_REFUNDED | PARTIALLY_REFUNDED (another partial refund), REFUNDED          |
// | REFUNDED           | none (terminal)                                               |
//
// (*) a payment that settles an invoice part of whose payments was refunded (and credited)
// before it was settled.
//
// Staying in a state counts as a transition only where the table lists it. A partially paid
// invoice stays PENDING: there is no PARTIALLY_PAID state, amount_paid and amount_remaining
// tell how far it is paid. Failures (payments/payment-failures.ts) are checked against the
// same table. A refund (payments/refund-math.ts) of a settled invoice starts from SUCCEEDED,
// OVERPAID or PARTIALLY_REFUNDED and follows the same moves, plus OVERPAID -> OVERPAID for a
// refund of part of the excess; a refund of an invoice still owed (PENDING, PROCESSING or
// FAILED with something paid) leaves its status as it is, since the status tells how the
// collection of amount_remaining stands and a refund does not change amount_remaining
// (canRefundTransition). A payment never makes OVERPAID -> OVERPAID.
import type { Decimal } from 'decimal.js'
import { D, toMoneyString } from '../pricing/index.js'
import type { PaymentStatus } from './invoice.entity.js'

export const PAYMENT_STATUSES: readonly PaymentStatus[] = [
  'INITIATED', 'PENDING', 'PROCESSING', 'SUCCEEDED', 'OVERPAID', 'FAILED', 'REFUNDED', 'PARTIALLY_REFUNDED',
]

const TRANSITIONS: Readonly<Record<PaymentStatus, readonly PaymentStatus[]>> = {
  INITIATED: ['PENDING', 'PROCESSING', 'SUCCEEDED', 'OVERPAID', 'FAILED'],
  PENDING: ['PENDING', 'PROCESSING', 'SUCCEEDED', 'OVERPAID', 'FAILED', 'PARTIALLY_REFUNDED'],
  PROCESSING: ['PENDING', 'SUCCEEDED', 'OVERPAID', 'FAILED', 'PARTIALLY_REFUNDED'],
  FAILED: ['PENDING', 'PROCESSING', 'SUCCEEDED', 'OVERPAID', 'FAILED', 'PARTIALLY_REFUNDED'],
  SUCCEEDED: ['PARTIALLY_REFUNDED', 'REFUNDED'],
  OVERPAID: ['SUCCEEDED', 'PARTIALLY_REFUNDED', 'REFUNDED'],
  PARTIALLY_REFUNDED: ['PARTIALLY_REFUNDED', 'REFUNDED'],
  REFUNDED: [],
}

export function canTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  return TRANSITIONS[from]?.includes(to) ?? false
}

const REFUNDABLE_SETTLED: readonly PaymentStatus[] = ['SUCCEEDED', 'OVERPAID', 'PARTIALLY_REFUNDED']
/** still owed, possibly partly paid: a refund keeps the status */
const REFUNDABLE_OWED: readonly PaymentStatus[] = ['PENDING', 'PROCESSING', 'FAILED']

export function canRefundTransition(from: PaymentStatus, to: PaymentStatus): boolean {
  if (REFUNDABLE_OWED.includes(from)) return to === from
  if (!REFUNDABLE_SETTLED.includes(from)) return false
  return canTransition(from, to) || (from === 'OVERPAID' && to === 'OVERPAID')
}

export interface SettledAmounts {
  amount_due: string
  amount_paid: string
  amount_remaining: string
  overpaid_amount: string
}

/**
 * What refunds have credited so far (their credit notes): the settled part of amount_due
 * (amount_due - amount_remaining) less what is still paid towards it (amount_paid - overpaid).
 */
export function creditedAmount(inv: SettledAmounts): Decimal {
  return D(inv.amount_due).minus(inv.amount_remaining).minus(D(inv.amount_paid).minus(inv.overpaid_amount))
}

export interface PaymentTotals {
  total: string
  amount_paid: string
  currency: string
  /** what refunds of the invoice credited before it was settled (creditedAmount); 0 when absent */
  credited?: string
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
 * The invoice's amounts after a payment of `amount` (> 0), where `owed` = total - credited:
 * amount_paid += amount; amount_remaining = max(owed - amount_paid, 0);
 * overpaid_amount = max(amount_paid - owed, 0); status SUCCEEDED when exactly paid
 * (PARTIALLY_REFUNDED when a refund credited part of it before), OVERPAID when over, PENDING
 * while partially paid. Amounts print in the currency's decimals.
 */
export function applyPayment(inv: PaymentTotals, amount: string): PaymentOutcome {
  const credited = D(inv.credited ?? 0)
  const owed = D(inv.total).minus(credited)
  const paid = D(inv.amount_paid).plus(D(amount))
  const diff = paid.minus(owed)
  const settled: PaymentStatus = credited.gt(0) ? 'PARTIALLY_REFUNDED' : 'SUCCEEDED'
  const payment_status: PaymentStatus = diff.isZero() ? settled : diff.isPositive() ? 'OVERPAID' : 'PENDING'
  return {
    amount_paid: toMoneyString(paid, inv.currency),
    amount_remaining: toMoneyString(D.max(owed.minus(paid), 0), inv.currency),
    overpaid_amount: toMoneyString(D.max(diff, 0), inv.currency),
    payment_status,
    fully_paid: payment_status !== 'PENDING',
  }
}
