// priceCharges with commitments (pure): which lines take which commitment, amounts by hand.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Price } from '../plans/price.entity.js'
import type { SubscriptionLineItem } from '../subscriptions/subscription.entity.js'
import { commitmentsFor, priceCharges, type MeasuredCharge } from './charges.js'

const start = new Date('2026-10-01T00:00:00Z')
const end = new Date('2026-11-01T00:00:00Z')

function charge(name: string, type: 'FIXED' | 'USAGE', amount: string, quantity: string, commitment: Partial<SubscriptionLineItem> = {}): MeasuredCharge {
  const price = { id: `price_${name}`, type, billing_model: 'FLAT_FEE', tier_mode: null, currency: 'USD', amount, tiers: null, transform_quantity: null, min_quantity: null } as unknown as Price
  const lineItem = { id: `li_${name}`, price_id: price.id, ...commitment } as SubscriptionLineItem
  return { lineItem, price, periodStart: start, periodEnd: end, quantity }
}

const noSub = { commitment_amount: null, overage_factor: null, enable_true_up: false }

test('a line commitment: 40 calls x 0.50 = 20.00 against 25.00 with true-up = 25.00; none on a threshold invoice', () => {
  const charges = [charge('calls', 'USAGE', '0.5', '40', { commitment_amount: '25', commitment_overage_factor: '1', commitment_true_up_enabled: true })]
  const cycle = priceCharges(charges, 'USD', commitmentsFor('SUBSCRIPTION_CYCLE', noSub))
  assert.equal(cycle.lines[0].amount, '25.00')
  assert.equal(cycle.lines[0].commitment_info?.computed_true_up_amount, '5.00')
  const threshold = priceCharges(charges, 'USD', commitmentsFor('AUTO_INVOICE_THRESHOLD', noSub))
  assert.equal(threshold.lines[0].amount, '20.00')
  assert.equal(threshold.lines[0].commitment_info, null)
})

test('quantity commitment: 3 units at a flat 1.25 = 3.75 committed; 5 units at factor 2 = 3.75 + 2 x 2.50 = 8.75', () => {
  const [line] = priceCharges([charge('gb', 'USAGE', '1.25', '5', { commitment_quantity: '3', commitment_overage_factor: '2' })], 'USD', commitmentsFor('SUBSCRIPTION_CYCLE', noSub)).lines
  assert.equal(line.amount, '8.75')
  assert.deepEqual(line.commitment_info, {
    amount: '3.75', quantity: '3', overage_factor: '2', computed_commitment_utilized_amount: '3.75',
    computed_overage_amount: '5.00', computed_true_up_amount: '0.00', is_windowed: false, true_up_enabled: false,
  })
})

test('subscription commitment 30.00 at 1.5: shared by usage lines without their own, FIXED lines excluded', () => {
  const charges = [
    charge('fee', 'FIXED', '10', '1'),
    charge('calls', 'USAGE', '0.1', '200', {}), // 20.00: all utilized
    charge('own', 'USAGE', '1', '7', { commitment_amount: '5', commitment_overage_factor: '1' }), // own: 5.00 + 2.00
    charge('gb', 'USAGE', '2', '8', {}), // 16.00: 10.00 utilized + 6.00 x 1.5 = 9.00 overage = 19.00
  ]
  const { lines, subtotal } = priceCharges(charges, 'USD', commitmentsFor('SUBSCRIPTION_CYCLE', { commitment_amount: '30', overage_factor: '1.5', enable_true_up: true }))
  assert.deepEqual(lines.map((l) => [l.amount, l.commitment_info?.computed_overage_amount ?? null, l.commitment_info?.amount ?? null]), [
    ['10.00', null, null],
    ['20.00', '0.00', '30.00'],
    ['7.00', '2.00', '5.00'],
    ['19.00', '9.00', '30.00'],
  ])
  assert.equal(subtotal, '56.00')
})
