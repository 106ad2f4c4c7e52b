// The rules a coupon's terms must satisfy, as pure checks: what a coupon takes off, for how long,
// how often and when it can be redeemed. Every failure names the offending field.
import { ValidationError } from '../../platform/errors.js'
import { currencyPrecision, parseDecimal, PricingInputError, toMoneyString } from '../pricing/index.js'
import type { Decimal } from 'decimal.js'
import type { Coupon, CouponDuration, CouponType } from './coupon.entity.js'

export interface CouponTermsInput {
  type: CouponType
  amount_off?: string
  percentage_off?: string
  currency?: string
  duration?: CouponDuration
  /** Flexprice's name for duration, with `repeated` for `repeating` */
  cadence?: CouponCadence
  duration_in_periods?: number
  max_redemptions?: number | null
  redeem_after?: string
  redeem_before?: string
}

export type CouponTerms = Pick<
  Coupon,
  'type' | 'amount_off' | 'percentage_off' | 'currency' | 'duration' | 'duration_in_periods' | 'max_redemptions' | 'redeem_after' | 'redeem_before'
>

export const COUPON_CADENCES = ['once', 'repeated', 'forever'] as const
export type CouponCadence = (typeof COUPON_CADENCES)[number]

/** A coupon's duration under the name Flexprice's SDK reads. */
export const cadenceOf = (duration: CouponDuration): CouponCadence => (duration === 'repeating' ? 'repeated' : duration)

function durationOf(input: CouponTermsInput): CouponDuration {
  const fromCadence = input.cadence === undefined ? undefined : input.cadence === 'repeated' ? 'repeating' : input.cadence
  if (fromCadence !== undefined && input.duration !== undefined && fromCadence !== input.duration) {
    throw new ValidationError(`cadence: ${input.cadence} contradicts duration ${input.duration}`, 'cadence')
  }
  return input.duration ?? fromCadence ?? 'once'
}

/** Validates a new coupon's terms and returns them normalized for storage. */
export function couponTerms(input: CouponTermsInput): CouponTerms {
  const duration = durationOf(input)
  const terms = {
    type: input.type,
    ...(input.type === 'fixed' ? fixedOff(input) : percentageOff(input)),
    duration,
    duration_in_periods: durationInPeriods(duration, input.duration_in_periods),
    max_redemptions: input.max_redemptions ?? null,
    redeem_after: dateField(input.redeem_after, 'redeem_after'),
    redeem_before: dateField(input.redeem_before, 'redeem_before'),
  }
  checkMaxRedemptions(terms.max_redemptions, 0)
  checkRedemptionWindow(terms.redeem_after, terms.redeem_before)
  return terms
}

function fixedOff(input: CouponTermsInput): Pick<Coupon, 'amount_off' | 'percentage_off' | 'currency'> {
  if (input.percentage_off !== undefined) throw new ValidationError('percentage_off is only allowed on percentage coupons', 'percentage_off')
  if (input.amount_off === undefined) throw new ValidationError('amount_off is required for fixed coupons', 'amount_off')
  if (input.currency === undefined) throw new ValidationError('currency is required for fixed coupons', 'currency')
  const currency = currencyField(input.currency)
  const amount = decimalField(input.amount_off, 'amount_off')
  if (amount.lte(0)) throw new ValidationError('amount_off must be greater than 0', 'amount_off')
  const precision = currencyPrecision(currency)
  if (amount.decimalPlaces() > precision) {
    throw new ValidationError(`amount_off must have at most ${precision} decimal places in ${currency}`, 'amount_off')
  }
  return { amount_off: toMoneyString(amount, currency), percentage_off: null, currency }
}

function percentageOff(input: CouponTermsInput): Pick<Coupon, 'amount_off' | 'percentage_off' | 'currency'> {
  if (input.amount_off !== undefined) throw new ValidationError('amount_off is only allowed on fixed coupons', 'amount_off')
  if (input.currency !== undefined) throw new ValidationError('currency must not be set: a percentage coupon carries no currency', 'currency')
  if (input.percentage_off === undefined) throw new ValidationError('percentage_off is required for percentage coupons', 'percentage_off')
  const pct = decimalField(input.percentage_off, 'percentage_off')
  if (pct.lte(0) || pct.gt(100)) throw new ValidationError('percentage_off must be greater than 0 and at most 100', 'percentage_off')
  return { amount_off: null, percentage_off: pct.toString(), currency: null }
}

function durationInPeriods(duration: CouponDuration, periods: number | undefined): number | null {
  if (duration !== 'repeating') {
    if (periods !== undefined) throw new ValidationError(`duration_in_periods is only allowed when duration is repeating, not ${duration}`, 'duration_in_periods')
    return null
  }
  if (periods === undefined) throw new ValidationError('duration_in_periods is required when duration is repeating', 'duration_in_periods')
  if (!Number.isInteger(periods) || periods < 1) throw new ValidationError('duration_in_periods must be an integer of at least 1', 'duration_in_periods')
  return periods
}

/** max_redemptions may never fall below the redemptions already made. */
export function checkMaxRedemptions(max: number | null, totalRedemptions: number): void {
  if (max === null) return
  if (!Number.isInteger(max) || max < 1) throw new ValidationError('max_redemptions must be an integer of at least 1, or null', 'max_redemptions')
  if (max < totalRedemptions) {
    throw new ValidationError(`max_redemptions must not be below total_redemptions (${totalRedemptions})`, 'max_redemptions')
  }
}

export function checkRedemptionWindow(after: Date | null, before: Date | null): void {
  if (after && before && !(after < before)) throw new ValidationError('redeem_before must be after redeem_after', 'redeem_before')
}

export function dateField(value: string | null | undefined, field: string): Date | null {
  if (value == null) return null
  const d = new Date(value)
  if (Number.isNaN(d.getTime())) throw new ValidationError(`${field} must be an ISO 8601 date-time`, field)
  return d
}

function currencyField(value: string): string {
  if (!/^[A-Za-z]{3}$/.test(value)) throw new ValidationError('currency must be a 3-letter ISO 4217 code', 'currency')
  return value.toUpperCase()
}

function decimalField(value: string, field: string): Decimal {
  try {
    return parseDecimal(value, field)
  } catch (err) {
    if (err instanceof PricingInputError) throw new ValidationError(`${field} must be a decimal string`, field)
    throw err
  }
}
