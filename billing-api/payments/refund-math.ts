// The arithmetic of a refund. Pure: decimals in, decimals out.
//
// A refund gives back money the customer paid. Of a refund of `amount`:
// - the excess part returns an overpayment first: min(amount, overpaid_amount). It was never
//   owed, so nothing is credited for it.
// - the credited part (the rest) un-pays the invoice: a credit note (a CREDIT invoice,
//   refunds.ts) records that the customer no longer owes it.
// Then: amount_paid -= amount; overpaid_amount -= excess; refunded_amount += amount;
// amount_remaining is unchanged (what was credited is no longer owed, so it is not owed again).
// At most amount_paid can be refunded.
//
// payment_status after the refund of a settled invoice (amount_remaining 0): OVERPAID while
// some excess is left; SUCCEEDED when only the excess was refunded; REFUNDED when nothing paid
// is left; else PARTIALLY_REFUNDED. An invoice still owed (amount_remaining > 0: PENDING,
// PROCESSING or FAILED, partly paid) keeps its status: the refund credits what it gives back,
// amount_remaining stays what it was, and a later payment of amount_remaining settles it as
// PARTIALLY_REFUNDED (invoices/payment-status.ts, applyPayment).
// What has been credited so far is creditedAmount (invoices/payment-status.ts).
import { ValidationError } from '../../platform/errors.js'
import { D, currencyPrecision, toMoneyString } from '../pricing/index.js'
import type { PaymentStatus } from '../invoices/invoice.entity.js'
import { creditedAmount } from '../invoices/index.js'

export interface RefundableAmounts {
  payment_status: PaymentStatus
  amount_due: string
  amount_paid: string
  amount_remaining: string
  overpaid_amount: string
  refunded_amount: string
  currency: string
}

export interface RefundOutcome {
  amount_paid: string
  overpaid_amount: string
  refunded_amount: string
  amount_remaining: string
  payment_status: PaymentStatus
  /** the part that returned an overpayment */
  excess: string
  /** the part the credit note credits */
  credited: string
}

export function applyRefund(inv: RefundableAmounts, amount: string): RefundOutcome {
  const value = D(amount)
  if (!value.gt(0)) throw new ValidationError('amount must be greater than 0', 'amount')
  if (value.decimalPlaces() > currencyPrecision(inv.currency)) {
    throw new ValidationError(`amount has more decimals than ${inv.currency} allows (${currencyPrecision(inv.currency)})`, 'amount')
  }
  const paid = D(inv.amount_paid)
  if (value.gt(paid)) {
    throw new ValidationError(`amount ${toMoneyString(value, inv.currency)} is more than what is left to refund (${toMoneyString(paid, inv.currency)})`, 'amount')
  }
  const overpaid = D(inv.overpaid_amount)
  const excess = D.min(value, overpaid)
  const credited = value.minus(excess)
  const paidAfter = paid.minus(value)
  const overpaidAfter = overpaid.minus(excess)
  const creditedSoFar = creditedAmount({ ...inv, amount_paid: paidAfter.toFixed(), overpaid_amount: overpaidAfter.toFixed() })
  const payment_status: PaymentStatus = D(inv.amount_remaining).gt(0)
    ? inv.payment_status
    : overpaidAfter.gt(0)
    ? 'OVERPAID'
    : creditedSoFar.isZero()
      ? 'SUCCEEDED'
      : paidAfter.isZero()
        ? 'REFUNDED'
        : 'PARTIALLY_REFUNDED'
  const m = (v: Parameters<typeof toMoneyString>[0]) => toMoneyString(v, inv.currency)
  return {
    amount_paid: m(paidAfter),
    overpaid_amount: m(overpaidAfter),
    refunded_amount: m(D(inv.refunded_amount).plus(value)),
    amount_remaining: m(inv.amount_remaining),
    payment_status,
    excess: m(excess),
    credited: m(credited),
  }
}
