import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { ValidationError } from '../../platform/errors.js'
import { checkMaxRedemptions, checkRedemptionWindow, couponTerms, type CouponTermsInput } from './coupon-terms.js'

const fieldError = (field: string) => (err: unknown) => err instanceof ValidationError && err.field === field

const fixed: CouponTermsInput = { type: 'fixed', amount_off: '10.5', currency: 'usd' }
const percentage: CouponTermsInput = { type: 'percentage', percentage_off: '15' }

describe('couponTerms', () => {
  test('fixed: amount_off at the currency precision, currency upper-cased, defaults filled in', () => {
    assert.deepEqual(couponTerms(fixed), {
      type: 'fixed', amount_off: '10.50', percentage_off: null, currency: 'USD', duration: 'once', duration_in_periods: null,
      max_redemptions: null, redeem_after: null, redeem_before: null,
    })
    assert.equal(couponTerms({ ...fixed, amount_off: '500', currency: 'JPY' }).amount_off, '500')
    assert.equal(couponTerms({ ...fixed, amount_off: '1.2', currency: 'KWD' }).amount_off, '1.200')
  })

  test('percentage: normalized, no currency', () => {
    assert.deepEqual(couponTerms({ ...percentage, percentage_off: '12.50', duration: 'repeating', duration_in_periods: 3, max_redemptions: 5 }), {
      type: 'percentage', amount_off: null, percentage_off: '12.5', currency: null, duration: 'repeating', duration_in_periods: 3,
      max_redemptions: 5, redeem_after: null, redeem_before: null,
    })
    assert.equal(couponTerms({ ...percentage, percentage_off: '100' }).percentage_off, '100')
    assert.equal(couponTerms({ ...percentage, percentage_off: '0.001' }).percentage_off, '0.001')
  })

  test('the redemption window as dates', () => {
    const t = couponTerms({ ...percentage, redeem_after: '2026-01-01T00:00:00Z', redeem_before: '2026-02-01T00:00:00+01:00' })
    assert.equal(t.redeem_after?.toISOString(), '2026-01-01T00:00:00.000Z')
    assert.equal(t.redeem_before?.toISOString(), '2026-01-31T23:00:00.000Z')
  })

  const rejected: [string, CouponTermsInput, string][] = [
    ['fixed without amount_off', { type: 'fixed', currency: 'USD' }, 'amount_off'],
    ['fixed without currency', { type: 'fixed', amount_off: '5' }, 'currency'],
    ['fixed with percentage_off', { ...fixed, percentage_off: '10' }, 'percentage_off'],
    ['fixed with amount_off 0', { ...fixed, amount_off: '0' }, 'amount_off'],
    ['fixed with a negative amount_off', { ...fixed, amount_off: '-1' }, 'amount_off'],
    ['fixed with amount_off not a decimal', { ...fixed, amount_off: '1e3' }, 'amount_off'],
    ['fixed finer than cents', { ...fixed, amount_off: '10.001' }, 'amount_off'],
    ['fixed finer than yen', { ...fixed, amount_off: '1.5', currency: 'JPY' }, 'amount_off'],
    ['fixed with a bad currency', { ...fixed, currency: 'US' }, 'currency'],
    ['percentage with a currency', { ...percentage, currency: 'USD' }, 'currency'],
    ['percentage with amount_off', { ...percentage, amount_off: '5' }, 'amount_off'],
    ['percentage without percentage_off', { type: 'percentage' }, 'percentage_off'],
    ['percentage of 0', { ...percentage, percentage_off: '0' }, 'percentage_off'],
    ['percentage above 100', { ...percentage, percentage_off: '100.01' }, 'percentage_off'],
    ['repeating without duration_in_periods', { ...percentage, duration: 'repeating' }, 'duration_in_periods'],
    ['repeating for 0 periods', { ...percentage, duration: 'repeating', duration_in_periods: 0 }, 'duration_in_periods'],
    ['repeating for 1.5 periods', { ...percentage, duration: 'repeating', duration_in_periods: 1.5 }, 'duration_in_periods'],
    ['once with duration_in_periods', { ...percentage, duration: 'once', duration_in_periods: 2 }, 'duration_in_periods'],
    ['forever with duration_in_periods', { ...percentage, duration: 'forever', duration_in_periods: 2 }, 'duration_in_periods'],
    ['default duration with duration_in_periods', { ...percentage, duration_in_periods: 2 }, 'duration_in_periods'],
    ['max_redemptions 0', { ...percentage, max_redemptions: 0 }, 'max_redemptions'],
    ['max_redemptions 2.5', { ...percentage, max_redemptions: 2.5 }, 'max_redemptions'],
    ['redeem_after not a date', { ...percentage, redeem_after: 'tomorrow' }, 'redeem_after'],
    ['an empty window', { ...percentage, redeem_after: '2026-01-01T00:00:00Z', redeem_before: '2026-01-01T00:00:00Z' }, 'redeem_before'],
    ['a reversed window', { ...percentage, redeem_after: '2026-02-01T00:00:00Z', redeem_before: '2026-01-01T00:00:00Z' }, 'redeem_before'],
  ]
  for (const [what, input, field] of rejected) {
    test(`rejects ${what}, naming ${field}`, () => {
      assert.throws(() => couponTerms(input), fieldError(field))
    })
  }

  test('the message of a percentage coupon with a currency says why', () => {
    assert.throws(() => couponTerms({ ...percentage, currency: 'EUR' }), /currency must not be set: a percentage coupon carries no currency/)
  })
})

describe('checkMaxRedemptions', () => {
  test('never below the redemptions already made', () => {
    assert.doesNotThrow(() => checkMaxRedemptions(4, 4))
    assert.doesNotThrow(() => checkMaxRedemptions(null, 1000))
    assert.throws(() => checkMaxRedemptions(3, 4), (err: unknown) => fieldError('max_redemptions')(err) && /total_redemptions \(4\)/.test((err as Error).message))
  })
})

describe('checkRedemptionWindow', () => {
  test('open ends are fine; a closed window needs after < before', () => {
    const jan = new Date('2026-01-01T00:00:00Z')
    const feb = new Date('2026-02-01T00:00:00Z')
    assert.doesNotThrow(() => checkRedemptionWindow(null, feb))
    assert.doesNotThrow(() => checkRedemptionWindow(jan, null))
    assert.doesNotThrow(() => checkRedemptionWindow(jan, feb))
    assert.throws(() => checkRedemptionWindow(feb, jan), fieldError('redeem_before'))
  })
})
