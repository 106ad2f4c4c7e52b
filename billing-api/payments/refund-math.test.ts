// Refund arithmetic, amounts worked out by hand.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ValidationError } from '../../platform/errors.js'
import { applyRefund, type RefundableAmounts } from './refund-math.js'

const paid25: RefundableAmounts = { payment_status: 'SUCCEEDED', amount_due: '25.00', amount_paid: '25.00', amount_remaining: '0.00', overpaid_amount: '0.00', refunded_amount: '0.00', currency: 'USD' }

test('a partial refund of a paid invoice credits it and leaves it PARTIALLY_REFUNDED; the rest makes it REFUNDED', () => {
  const first = applyRefund(paid25, '10')
  // 25.00 - 10.00 = 15.00 still paid; nothing was overpaid, so all 10.00 is credited
  assert.deepEqual(first, {
    amount_paid: '15.00', overpaid_amount: '0.00', refunded_amount: '10.00', amount_remaining: '0.00',
    payment_status: 'PARTIALLY_REFUNDED', excess: '0.00', credited: '10.00',
  })
  const second = applyRefund({ ...paid25, ...first }, '15.00')
  assert.deepEqual(second, {
    amount_paid: '0.00', overpaid_amount: '0.00', refunded_amount: '25.00', amount_remaining: '0.00',
    payment_status: 'REFUNDED', excess: '0.00', credited: '15.00',
  })
})

test('an overpaid invoice returns the excess first: OVERPAID, then SUCCEEDED, then credited', () => {
  // 25.00 due, 30.50 paid: 5.50 over
  const over: RefundableAmounts = { ...paid25, amount_paid: '30.50', overpaid_amount: '5.50' }
  const a = applyRefund(over, '2.50')
  assert.deepEqual([a.amount_paid, a.overpaid_amount, a.refunded_amount, a.payment_status, a.excess, a.credited], ['28.00', '3.00', '2.50', 'OVERPAID', '2.50', '0.00'])
  const b = applyRefund({ ...over, ...a }, '3')
  assert.deepEqual([b.amount_paid, b.overpaid_amount, b.refunded_amount, b.payment_status, b.excess, b.credited], ['25.00', '0.00', '5.50', 'SUCCEEDED', '3.00', '0.00'])
  // one refund across both parts: 1.00 of excess left, 4.00 refunded -> 1.00 excess + 3.00 credited
  const c = applyRefund({ ...over, ...a, amount_paid: '26.00', overpaid_amount: '1.00' }, '4')
  assert.deepEqual([c.amount_paid, c.overpaid_amount, c.payment_status, c.excess, c.credited], ['22.00', '0.00', 'PARTIALLY_REFUNDED', '1.00', '3.00'])
})

test('a partially paid invoice: what is refunded is credited, the remaining balance and the status stay', () => {
  // 25.00 due, 10.00 paid, 15.00 remaining; refund 4.00 -> 6.00 paid, still 15.00 remaining
  const r = applyRefund({ ...paid25, payment_status: 'PENDING', amount_paid: '10.00', amount_remaining: '15.00' }, '4.00')
  assert.deepEqual([r.amount_paid, r.amount_remaining, r.refunded_amount, r.payment_status, r.credited], ['6.00', '15.00', '4.00', 'PENDING', '4.00'])
  // a failed attempt for the rest leaves it FAILED; a refund of what was paid keeps that
  const f = applyRefund({ ...paid25, payment_status: 'FAILED', amount_paid: '10.00', amount_remaining: '15.00' }, '10')
  assert.deepEqual([f.amount_paid, f.amount_remaining, f.refunded_amount, f.payment_status, f.credited], ['0.00', '15.00', '10.00', 'FAILED', '10.00'])
})

test('30.00 paid of 50.00: refund 10.00, then the other 20.00; never more than is still paid', () => {
  const owed: RefundableAmounts = { payment_status: 'PENDING', amount_due: '50.00', amount_paid: '30.00', amount_remaining: '20.00', overpaid_amount: '0.00', refunded_amount: '0.00', currency: 'USD' }
  // 30.00 - 10.00 = 20.00 still paid; 50.00 - 20.00 settled = 20.00 paid + 10.00 credited
  const a = applyRefund(owed, '10.00')
  assert.deepEqual(a, {
    amount_paid: '20.00', overpaid_amount: '0.00', refunded_amount: '10.00', amount_remaining: '20.00',
    payment_status: 'PENDING', excess: '0.00', credited: '10.00',
  })
  assert.throws(() => applyRefund({ ...owed, ...a }, '20.01'), (e) => e instanceof ValidationError && /20\.01 is more than what is left to refund \(20\.00/.test(e.message))
  const b = applyRefund({ ...owed, ...a }, '20')
  assert.deepEqual([b.amount_paid, b.refunded_amount, b.amount_remaining, b.payment_status, b.credited], ['0.00', '30.00', '20.00', 'PENDING', '20.00'])
  assert.throws(() => applyRefund({ ...owed, ...b }, '0.01'), /more than what is left to refund \(0\.00/)
})

test('never more than what was paid; amounts must be positive and in the currency decimals', () => {
  assert.throws(() => applyRefund(paid25, '25.01'), (e) => e instanceof ValidationError && /more than what is left to refund \(25\.00\)/.test(e.message))
  assert.throws(() => applyRefund({ ...paid25, amount_paid: '0.00', refunded_amount: '25.00' }, '0.01'), ValidationError)
  assert.throws(() => applyRefund(paid25, '0'), /greater than 0/)
  assert.throws(() => applyRefund(paid25, '-1'), /greater than 0/)
  assert.throws(() => applyRefund(paid25, '1.001'), /decimals/)
  // JPY has no decimals: 1000 of 1000 refunded exactly
  const jpy = applyRefund({ ...paid25, amount_due: '1000', amount_paid: '1000', amount_remaining: '0', overpaid_amount: '0', refunded_amount: '0', currency: 'JPY' }, '1000')
  assert.deepEqual([jpy.amount_paid, jpy.refunded_amount, jpy.payment_status], ['0', '1000', 'REFUNDED'])
  assert.throws(() => applyRefund({ ...paid25, currency: 'JPY', amount_paid: '1000' }, '0.5'), /decimals/)
})

test('decimal exactness: 0.10 + 0.20 refunded of 0.30 leaves exactly 0.00', () => {
  const p: RefundableAmounts = { ...paid25, amount_due: '0.30', amount_paid: '0.30' }
  const a = applyRefund(p, '0.10')
  const b = applyRefund({ ...p, ...a }, '0.20')
  assert.deepEqual([b.amount_paid, b.refunded_amount, b.payment_status], ['0.00', '0.30', 'REFUNDED'])
})
