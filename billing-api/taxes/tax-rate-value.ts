// What a tax rate charges: a percentage of the taxable amount, or a fixed amount in one currency.
// Pure validation; every failure names the offending field.
import { ValidationError } from '../../platform/errors.js'
import { currencyPrecision, parseDecimal, PricingInputError, toMoneyString } from '../pricing/index.js'
import type { TaxRate } from './tax-rate.entity.js'

export const TAX_RATE_TYPES = ['PERCENTAGE', 'FIXED'] as const

export interface TaxRateValueInput {
  /** Flexprice's name for which of the two values is set */
  tax_rate_type?: (typeof TAX_RATE_TYPES)[number]
  percentage_value?: string
  fixed_value?: string
  currency?: string
}

export type TaxRateValue = Pick<TaxRate, 'percentage_value' | 'fixed_value' | 'currency'>

export const taxRateType = (r: Pick<TaxRate, 'percentage_value'>) => (r.percentage_value !== null ? 'PERCENTAGE' : 'FIXED')

/** Validates percentage_value XOR fixed_value (+ currency) and returns them normalized for storage. */
export function taxRateValue(input: TaxRateValueInput): TaxRateValue {
  if (input.percentage_value !== undefined && input.fixed_value !== undefined) {
    throw new ValidationError('fixed_value: set either percentage_value or fixed_value, not both', 'fixed_value')
  }
  if (input.percentage_value === undefined && input.fixed_value === undefined) {
    throw new ValidationError('percentage_value: one of percentage_value or fixed_value is required', 'percentage_value')
  }
  if (input.tax_rate_type !== undefined && input.tax_rate_type !== (input.percentage_value !== undefined ? 'PERCENTAGE' : 'FIXED')) {
    throw new ValidationError(`tax_rate_type: a ${input.tax_rate_type} rate sets ${input.tax_rate_type === 'FIXED' ? 'fixed_value' : 'percentage_value'}`, 'tax_rate_type')
  }
  try {
    return input.percentage_value !== undefined ? percentage(input.percentage_value, input.currency) : fixed(input.fixed_value!, input.currency)
  } catch (err) {
    if (err instanceof PricingInputError) throw new ValidationError(err.message, err.field)
    throw err
  }
}

function percentage(value: string, currency: string | undefined): TaxRateValue {
  if (currency !== undefined) {
    throw new ValidationError('currency: must not be set on a percentage tax rate, which applies to any currency', 'currency')
  }
  const pct = parseDecimal(value, 'percentage_value')
  if (pct.lt(0) || pct.gt(100)) throw new ValidationError('percentage_value: must be between 0 and 100', 'percentage_value')
  return { percentage_value: pct.toString(), fixed_value: null, currency: null }
}

function fixed(value: string, currency: string | undefined): TaxRateValue {
  if (currency === undefined) throw new ValidationError('currency: is required with fixed_value', 'currency')
  const precision = currencyPrecision(currency)
  const amount = parseDecimal(value, 'fixed_value')
  if (amount.lt(0)) throw new ValidationError('fixed_value: must be 0 or more', 'fixed_value')
  if (amount.decimalPlaces() > precision) {
    throw new ValidationError(`fixed_value: at most ${precision} decimal places in ${currency.toUpperCase()}`, 'fixed_value')
  }
  const code = currency.toUpperCase()
  return { percentage_value: null, fixed_value: toMoneyString(amount, code), currency: code }
}
