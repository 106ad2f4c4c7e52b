import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { InvalidOperationError } from '../../platform/errors.js'
import { D } from '../pricing/index.js'
import type { Coupon } from './coupon.entity.js'
import { couponDiscount, isRedeemable, redemptionRefusal, type DiscountTerms, type RedemptionTerms } from './discount.js'

const AT = new Date('2026-01-15T00:00:00Z')

const percent = (p: string, window: Partial<DiscountTerms> = {}): DiscountTerms => ({
  type: 'percentage', percentage_off: p, amount_off: null, currency: null, redeem_after: null, redeem_before: null, ...window,
})
const fixed = (amountOff: string, currency: string, window: Partial<DiscountTerms> = {}): DiscountTerms => ({
  type: 'fixed', amount_off: amountOff, percentage_off: null, currency, redeem_after: null, redeem_before: null, ...window,
})

/** The discount printed with the currency's decimals, as an invoice would show it. */
function discount(coupon: DiscountTerms, amount: string, currency: string, places: number, at = AT): string {
  const d = couponDiscount(coupon, new D(amount), currency, at)
  assert.ok(d instanceof D, 'a Decimal of the pricing engine')
  return d.toFixed(places)
}

describe('couponDiscount: percentage, rounded half-up to the currency minor unit', () => {
  const cases: [pct: string, amount: string, currency: string, places: number, expected: string, why: string][] = [
    ['15', '33.33', 'USD', 2, '5.00', '4.9995 rounds up'],
    ['15', '33.29', 'USD', 2, '4.99', '4.9935 rounds down'],
    ['15', '33.30', 'USD', 2, '5.00', '4.995 is a tie: half-up, not to even (4.99 would be banker\'s)'],
    ['12.5', '99.99', 'USD', 2, '12.50', '12.49875'],
    ['33.33', '10.00', 'USD', 2, '3.33', '3.333'],
    ['100', '50.00', 'USD', 2, '50.00', 'the whole amount'],
    ['15', '1999', 'JPY', 0, '300', '299.85, JPY has no decimals'],
    ['10', '1005', 'JPY', 0, '101', '100.5 is a tie: up'],
    ['10', '1.225', 'KWD', 3, '0.123', '0.1225 is a tie at 3 decimals: up'],
    ['7.5', '1.234', 'KWD', 3, '0.093', '0.09255'],
    ['0.01', '1.00', 'USD', 2, '0.00', '0.0001 rounds to nothing'],
  ]
  for (const [pct, amount, currency, places, expected, why] of cases) {
    test(`${pct}% of ${amount} ${currency} = ${expected} (${why})`, () => {
      assert.equal(discount(percent(pct), amount, currency, places), expected)
    })
  }

  test('never more than the amount, even when the amount is finer than the minor unit', () => {
    // 100% of 0.005 USD rounds to 0.01, which would exceed the amount.
    assert.equal(couponDiscount(percent('100'), new D('0.005'), 'USD', AT).toString(), '0.005')
  })

  test('applies to any currency', () => {
    assert.equal(discount(percent('20'), '10.00', 'EUR', 2), '2.00')
    assert.equal(discount(percent('20'), '10.00', 'gbp', 2), '2.00')
  })
})

describe('couponDiscount: fixed', () => {
  test('takes amount_off, capped at the amount', () => {
    assert.equal(discount(fixed('10.00', 'USD'), '25.00', 'USD', 2), '10.00')
    assert.equal(discount(fixed('10.00', 'USD'), '10.00', 'USD', 2), '10.00')
    assert.equal(discount(fixed('10.00', 'USD'), '7.50', 'USD', 2), '7.50')
    assert.equal(discount(fixed('500', 'JPY'), '300', 'JPY', 0), '300')
    assert.equal(discount(fixed('1.250', 'KWD'), '3.000', 'KWD', 3), '1.250')
  })

  test('the currency comparison ignores case', () => {
    assert.equal(discount(fixed('10.00', 'USD'), '25.00', 'usd', 2), '10.00')
  })

  test('only in its own currency', () => {
    assert.throws(
      () => couponDiscount(fixed('10.00', 'EUR'), new D('25.00'), 'USD', AT),
      (err: unknown) => err instanceof InvalidOperationError && /EUR.*USD/.test(err.message),
    )
  })
})

describe('couponDiscount: nothing off', () => {
  test('a zero or negative amount', () => {
    assert.equal(discount(percent('15'), '0', 'USD', 2), '0.00')
    assert.equal(discount(percent('15'), '-10.00', 'USD', 2), '0.00')
    assert.equal(discount(fixed('5.00', 'USD'), '-10.00', 'USD', 2), '0.00')
  })

  test('outside the redemption window: redeem_after inclusive, redeem_before exclusive', () => {
    const window = { redeem_after: new Date('2026-01-01T00:00:00Z'), redeem_before: new Date('2026-02-01T00:00:00Z') }
    const coupon = fixed('5.00', 'USD', window)
    assert.equal(discount(coupon, '20.00', 'USD', 2, new Date('2025-12-31T23:59:59.999Z')), '0.00')
    assert.equal(discount(coupon, '20.00', 'USD', 2, new Date('2026-01-01T00:00:00Z')), '5.00')
    assert.equal(discount(coupon, '20.00', 'USD', 2, new Date('2026-01-31T23:59:59.999Z')), '5.00')
    assert.equal(discount(coupon, '20.00', 'USD', 2, new Date('2026-02-01T00:00:00Z')), '0.00')
    assert.equal(discount(percent('10', window), '20.00', 'USD', 2, new Date('2026-02-01T00:00:00Z')), '0.00')
  })

  test('a currency mismatch is an error even outside the window', () => {
    const coupon = fixed('5.00', 'EUR', { redeem_before: new Date('2020-01-01T00:00:00Z') })
    assert.throws(() => couponDiscount(coupon, new D('20'), 'USD', AT), InvalidOperationError)
  })
})

describe('isRedeemable', () => {
  const base: RedemptionTerms = { status: 'published', redeem_after: null, redeem_before: null, max_redemptions: null, total_redemptions: 0 }
  const coupon = (over: Partial<Coupon>): RedemptionTerms => ({ ...base, ...over })

  test('a published coupon without limits', () => {
    assert.equal(isRedeemable(base, AT), true)
    assert.equal(isRedeemable(coupon({ total_redemptions: 1000 }), AT), true)
    assert.equal(redemptionRefusal(base, AT), null)
  })

  test('not once archived', () => {
    assert.equal(isRedeemable(coupon({ status: 'archived' }), AT), false)
    assert.equal(redemptionRefusal(coupon({ status: 'archived' }), AT), 'the coupon is archived')
  })

  test('only inside [redeem_after, redeem_before)', () => {
    const c = coupon({ redeem_after: new Date('2026-01-01T00:00:00Z'), redeem_before: new Date('2026-02-01T00:00:00Z') })
    assert.equal(isRedeemable(c, new Date('2025-12-31T23:59:59.999Z')), false)
    assert.equal(isRedeemable(c, new Date('2026-01-01T00:00:00Z')), true)
    assert.equal(isRedeemable(c, new Date('2026-01-31T23:59:59.999Z')), true)
    assert.equal(isRedeemable(c, new Date('2026-02-01T00:00:00Z')), false)
    assert.equal(redemptionRefusal(c, new Date('2025-06-01T00:00:00Z')), 'the coupon cannot be redeemed before 2026-01-01T00:00:00.000Z')
    assert.equal(redemptionRefusal(c, new Date('2026-06-01T00:00:00Z')), 'the coupon could only be redeemed before 2026-02-01T00:00:00.000Z')
  })

  test('only while total_redemptions is below max_redemptions', () => {
    assert.equal(isRedeemable(coupon({ max_redemptions: 5, total_redemptions: 4 }), AT), true)
    assert.equal(isRedeemable(coupon({ max_redemptions: 5, total_redemptions: 5 }), AT), false)
    assert.equal(isRedeemable(coupon({ max_redemptions: 1, total_redemptions: 0 }), AT), true)
    assert.equal(redemptionRefusal(coupon({ max_redemptions: 5, total_redemptions: 5 }), AT), 'the coupon has reached its max_redemptions (5)')
  })
})
