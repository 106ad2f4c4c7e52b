// Proration by hand: every expectation below is worked out in the comment beside it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { proratedAmount, prorateQuantityChange, splitBilledAmount, usedFraction } from './proration.js'

const d = (s: string) => new Date(s)
const start = d('2026-11-01T00:00:00Z')
const end30 = d('2026-12-01T00:00:00Z') // November: 30 days

test('a 20.00 EUR fee cut after 12 of 30 days: 8.00 used, 12.00 credited', () => {
  // 20 * 12/30 = 8
  assert.deepEqual(splitBilledAmount('20.00', start, end30, d('2026-11-13T00:00:00Z'), 'EUR'), { used: '8.00', credit: '12.00' })
})

test('the used share is second-exact, not day-rounded', () => {
  // 12 days and 12 hours of 30 days = 12.5/30; 30 * 12.5/30 = 12.50
  assert.equal(proratedAmount('30', start, end30, d('2026-11-13T12:00:00Z'), 'EUR'), '12.50')
  // one second of a 30-day (2,592,000 s) period: 2592000 * 1/2592000 = 1.00
  assert.equal(proratedAmount('2592000', start, end30, d('2026-11-01T00:00:01Z'), 'EUR'), '1.00')
  // sub-second parts are dropped: 0.999 s counts as 0 s
  assert.equal(proratedAmount('2592000', start, end30, d('2026-11-01T00:00:00.999Z'), 'EUR'), '0.00')
  assert.equal(usedFraction(start, end30, d('2026-11-16T00:00:00Z')).toString(), '0.5')
})

test('rounding happens once, half-up, and used + credit equals the billed amount', () => {
  // 10.00 * 1/3 = 3.3333.. -> 3.33 used, credit 10.00 - 3.33 = 6.67 (not 6.666.. -> 6.67 computed apart)
  const third = d('2026-11-11T00:00:00Z') // 10 of 30 days
  assert.deepEqual(splitBilledAmount('10.00', start, end30, third, 'EUR'), { used: '3.33', credit: '6.67' })
  // 0.05 * 10/30 = 0.01666.. -> 0.02 (half-up at the cent), credit 0.03
  assert.deepEqual(splitBilledAmount('0.05', start, end30, third, 'EUR'), { used: '0.02', credit: '0.03' })
  // JPY has no minor unit: 1000 * 10/30 = 333.33.. -> 333, credit 667
  assert.deepEqual(splitBilledAmount('1000', start, end30, third, 'JPY'), { used: '333', credit: '667' })
})

test('a cut outside the period clamps: before the start uses nothing, after the end uses all', () => {
  assert.deepEqual(splitBilledAmount('20.00', start, end30, d('2026-10-20T00:00:00Z'), 'EUR'), { used: '0.00', credit: '20.00' })
  assert.deepEqual(splitBilledAmount('20.00', start, end30, d('2026-12-05T00:00:00Z'), 'EUR'), { used: '20.00', credit: '0.00' })
  // February 2028 has 29 days: 29.00 cut after 10 days = 10.00
  assert.equal(proratedAmount('29.00', d('2028-02-01T00:00:00Z'), d('2028-03-01T00:00:00Z'), d('2028-02-11T00:00:00Z'), 'EUR'), '10.00')
  assert.throws(() => usedFraction(end30, start, end30), RangeError)
})

test('a seat 30.00/month in advance, 2 -> 5 seats on day 10 of 30: credit -40.00, debit 100.00, net 60.00', () => {
  // old: 2 * 30 = 60.00 for the period; 20 of 30 days remain: 60 * 20/30 = 40.00 credited
  // new: 5 * 30 = 150.00; 150 * 20/30 = 100.00 charged; net 100.00 - 40.00 = 60.00
  assert.deepEqual(prorateQuantityChange('60.00', '150.00', start, end30, d('2026-11-11T00:00:00Z'), 'EUR'), { credit: '-40.00', debit: '100.00', net: '60.00' })
})

test('a quantity decrease nets negative; each side is rounded once, half-up', () => {
  // 3 -> 1 seat of 10.00 after 10 of 30 days: remaining 20/30 = 2/3
  // old 30.00 * 2/3 = 20.00 -> -20.00; new 10.00: used 10 * 1/3 = 3.33, remaining 10.00 - 3.33 = 6.67; net -13.33
  assert.deepEqual(prorateQuantityChange('30.00', '10.00', start, end30, d('2026-11-11T00:00:00Z'), 'EUR'), { credit: '-20.00', debit: '6.67', net: '-13.33' })
  // at the period start everything is swapped: -30.00 + 10.00 = -20.00; at the end nothing is left
  assert.deepEqual(prorateQuantityChange('30.00', '10.00', start, end30, start, 'EUR'), { credit: '-30.00', debit: '10.00', net: '-20.00' })
  assert.deepEqual(prorateQuantityChange('30.00', '10.00', start, end30, end30, 'EUR'), { credit: '0.00', debit: '0.00', net: '0.00' })
  // JPY: 1000 -> 2500 after 10 of 30 days: used 333 and 833 (833.33..), remaining 667 and 1667; net 1000
  assert.deepEqual(prorateQuantityChange('1000', '2500', start, end30, d('2026-11-11T00:00:00Z'), 'JPY'), { credit: '-667', debit: '1667', net: '1000' })
})
