// What a coupon takes off an amount, and whether it can be redeemed at a given instant.
// Pure: decimals and dates in, decimals and booleans out; no I/O, no clock.
import type { Decimal } from 'decimal.js'
import { InvalidOperationError } from '../../platform/errors.js'
import { D, parseDecimal, roundMoney } from '../pricing/index.js'
import type { Coupon } from './coupon.entity.js'

export type DiscountTerms = Pick<Coupon, 'type' | 'amount_off' | 'percentage_off' | 'currency' | 'redeem_after' | 'redeem_before'>
export type RedemptionTerms = Pick<Coupon, 'status' | 'redeem_after' | 'redeem_before' | 'max_redemptions' | 'total_redemptions'>

/** redeem_after is inclusive, redeem_before exclusive (the redemption UPDATE uses the same bounds). */
export function withinRedemptionWindow(coupon: Pick<Coupon, 'redeem_after' | 'redeem_before'>, at: Date): boolean {
  if (coupon.redeem_after && at < coupon.redeem_after) return false
  if (coupon.redeem_before && at >= coupon.redeem_before) return false
  return true
}

/** Why the coupon cannot be redeemed at `at`, or null when it can. */
export function redemptionRefusal(coupon: RedemptionTerms, at: Date): string | null {
  if (coupon.status !== 'published') return `the coupon is ${coupon.status}`
  if (coupon.redeem_after && at < coupon.redeem_after) return `the coupon cannot be redeemed before ${coupon.redeem_after.toISOString()}`
  if (coupon.redeem_before && at >= coupon.redeem_before) return `the coupon could only be redeemed before ${coupon.redeem_before.toISOString()}`
  if (coupon.max_redemptions !== null && coupon.total_redemptions >= coupon.max_redemptions) {
    return `the coupon has reached its max_redemptions (${coupon.max_redemptions})`
  }
  return null
}

export function isRedeemable(coupon: RedemptionTerms, at: Date): boolean {
  return redemptionRefusal(coupon, at) === null
}

/**
 * The discount the coupon gives on `amount` in `currency`: never negative, never more than the amount.
 * `at` is the instant the coupon is redeemed against this amount; outside the redemption window the
 * discount is 0. A coupon carried over several periods is redeemed once, so for its later periods the
 * caller passes the redemption instant, not the period's date. max_redemptions is not checked here:
 * the redemption being discounted is already counted in total_redemptions.
 */
export function couponDiscount(coupon: DiscountTerms, amount: Decimal, currency: string, at: Date): Decimal {
  const base = parseDecimal(amount, 'amount')
  if (coupon.type === 'fixed' && coupon.currency?.toUpperCase() !== currency.toUpperCase()) {
    throw new InvalidOperationError(`a ${coupon.currency} coupon cannot discount an amount in ${currency}`)
  }
  if (base.lte(0) || !withinRedemptionWindow(coupon, at)) return new D(0)
  const discount =
    coupon.type === 'fixed'
      ? new D(coupon.amount_off!)
      : roundMoney(base.mul(coupon.percentage_off!).div(100), currency)
  // Rounding half-up can overshoot an amount finer than the currency's minor unit (100% of 0.005 USD).
  return D.min(discount, base)
}
