// The payment status table and the payment arithmetic, amounts worked out by hand.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { PaymentStatus } from './invoice.entity.js'
import { PAYMENT_STATUSES, applyPayment, canRefundTransition, canTransition, creditedAmount } from './payment-status.js'

test('the documented transitions are allowed', () => {
  const allowed: [PaymentStatus, PaymentStatus][] = [
    ['INITIATED', 'PENDING'], ['INITIATED', 'PROCESSING'], ['INITIATED', 'SUCCEEDED'], ['INITIATED', 'OVERPAID'], ['INITIATED', 'FAILED'],
    ['PENDING', 'PENDING'], ['PENDING', 'PROCESSING'], ['PENDING', 'SUCCEEDED'], ['PENDING', 'OVERPAID'], ['PENDING', 'FAILED'], ['PENDING', 'PARTIALLY_REFUNDED'],
    ['PROCESSING', 'PENDING'], ['PROCESSING', 'SUCCEEDED'], ['PROCESSING', 'OVERPAID'], ['PROCESSING', 'FAILED'], ['PROCESSING', 'PARTIALLY_REFUNDED'],
    ['FAILED', 'PENDING'], ['FAILED', 'PROCESSING'], ['FAILED', 'SUCCEEDED'], ['FAILED', 'OVERPAID'], ['FAILED', 'FAILED'], ['FAILED', 'PARTIALLY_REFUNDED'],
    ['SUCCEEDED', 'PARTIALLY_REFUNDED'], ['SUCCEEDED', 'REFUNDED'],
    ['OVERPAID', 'SUCCEEDED'], ['OVERPAID', 'PARTIALLY_REFUNDED'], ['OVERPAID', 'REFUNDED'],
    ['PARTIALLY_REFUNDED', 'PARTIALLY_REFUNDED'], ['PARTIALLY_REFUNDED', 'REFUNDED'],
  ]
  for (const [from, to] of allowed) assert.ok(canTransition(from, to), `${from} -> ${to}`)
  // Everything else is refused: 8 x 8 pairs, 29 allowed.
  let refused = 0
  for (const from of PAYMENT_STATUSES) {
    for (const to of PAYMENT_STATUSES) {
      if (!allowed.some(([f, t]) => f === from && t === to)) {
        assert.equal(canTransition(from, to), false, `${from} -> ${to} is refused`)
        refused++
      }
    }
  }
  assert.equal(refused, 64 - 29)
})

test('refunded is terminal; paid invoices take no further payment states', () => {
  for (const to of PAYMENT_STATUSES) assert.equal(canTransition('REFUNDED', to), false)
  assert.equal(canTransition('SUCCEEDED', 'OVERPAID'), false)
  assert.equal(canTransition('SUCCEEDED', 'PENDING'), false)
  assert.equal(canTransition('OVERPAID', 'OVERPAID'), false)
  assert.equal(canTransition('SUCCEEDED', 'SUCCEEDED'), false)
  assert.equal(canTransition('UNKNOWN' as PaymentStatus, 'PENDING'), false)
})

test('a partial payment leaves the invoice PENDING', () => {
  // 25.00 - 10 = 15.00 remaining
  assert.deepEqual(applyPayment({ total: '25.00', amount_paid: '0', currency: 'USD' }, '10'), {
    amount_paid: '10.00', amount_remaining: '15.00', overpaid_amount: '0.00', payment_status: 'PENDING', fully_paid: false,
  })
})

test('paying the rest exactly makes it SUCCEEDED', () => {
  // 10.00 + 15.00 = 25.00 = total
  assert.deepEqual(applyPayment({ total: '25.00', amount_paid: '10.00', currency: 'USD' }, '15.00'), {
    amount_paid: '25.00', amount_remaining: '0.00', overpaid_amount: '0.00', payment_status: 'SUCCEEDED', fully_paid: true,
  })
})

test('paying more than the total makes it OVERPAID with the excess', () => {
  // 10.00 + 15.01 = 25.01; 25.01 - 25.00 = 0.01 over
  assert.deepEqual(applyPayment({ total: '25.00', amount_paid: '10.00', currency: 'USD' }, '15.01'), {
    amount_paid: '25.01', amount_remaining: '0.00', overpaid_amount: '0.01', payment_status: 'OVERPAID', fully_paid: true,
  })
})

test('amounts print in the currency decimals and never go through floats', () => {
  // 0.1 + 0.2 = 0.3 exactly (a float sum would be 0.30000000000000004)
  assert.equal(applyPayment({ total: '1', amount_paid: '0.1', currency: 'USD' }, '0.2').amount_paid, '0.30')
  // JPY has no minor unit: 1000 - 400 = 600
  assert.deepEqual(applyPayment({ total: '1000', amount_paid: '0', currency: 'JPY' }, '400'), {
    amount_paid: '400', amount_remaining: '600', overpaid_amount: '0', payment_status: 'PENDING', fully_paid: false,
  })
  // KWD has three: 12.345 - 12.345 = 0
  assert.equal(applyPayment({ total: '12.345', amount_paid: '0', currency: 'KWD' }, '12.345').payment_status, 'SUCCEEDED')
})

test('refunds: an invoice still owed keeps its status; a settled one moves along the table', () => {
  for (const owed of ['PENDING', 'PROCESSING', 'FAILED'] as const) {
    assert.ok(canRefundTransition(owed, owed), `${owed} stays ${owed}`)
    for (const to of PAYMENT_STATUSES) if (to !== owed) assert.equal(canRefundTransition(owed, to), false, `${owed} -> ${to}`)
  }
  assert.ok(canRefundTransition('SUCCEEDED', 'PARTIALLY_REFUNDED'))
  assert.ok(canRefundTransition('OVERPAID', 'OVERPAID'))
  assert.equal(canRefundTransition('INITIATED', 'INITIATED'), false)
  assert.equal(canRefundTransition('REFUNDED', 'REFUNDED'), false)
})

test('paying the rest after a refund credited part of a partly paid invoice settles it as PARTIALLY_REFUNDED', () => {
  // 50.00 due, 30.00 paid, 10.00 refunded (credited): 20.00 paid, 20.00 remaining
  const inv = { amount_due: '50.00', amount_paid: '20.00', amount_remaining: '20.00', overpaid_amount: '0.00' }
  const credited = creditedAmount(inv).toFixed()
  assert.equal(credited, '10')
  // 50.00 - 10.00 credited = 40.00 owed; 20.00 + 20.00 = 40.00
  assert.deepEqual(applyPayment({ total: '50.00', amount_paid: '20.00', currency: 'USD', credited }, '20.00'), {
    amount_paid: '40.00', amount_remaining: '0.00', overpaid_amount: '0.00', payment_status: 'PARTIALLY_REFUNDED', fully_paid: true,
  })
  // 5.00 of it: 15.00 left, still PENDING
  assert.equal(applyPayment({ total: '50.00', amount_paid: '20.00', currency: 'USD', credited }, '5').amount_remaining, '15.00')
  // 20.01: 0.01 over
  assert.deepEqual(applyPayment({ total: '50.00', amount_paid: '20.00', currency: 'USD', credited }, '20.01').overpaid_amount, '0.01')
  // everything paid refunded (30.00 credited), then the 20.00 remaining paid
  assert.equal(applyPayment({ total: '50.00', amount_paid: '0.00', currency: 'USD', credited: '30' }, '20').payment_status, 'PARTIALLY_REFUNDED')
})
