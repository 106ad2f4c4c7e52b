// The tax a rate charges on a taxable amount. Pure: decimals in, a decimal out; no I/O, no clock.
import type { Decimal } from 'decimal.js'
import { InvalidOperationError } from '../../platform/errors.js'
import { D, parseDecimal, roundMoney } from '../pricing/index.js'
import type { TaxRate } from './tax-rate.entity.js'

export type TaxTerms = Pick<TaxRate, 'percentage_value' | 'fixed_value' | 'currency'>

/**
 * Percentage: taxable x p / 100, rounded half-up to the currency's minor unit (a negative taxable
 * amount, as on a credit, gives a negative tax). Fixed: the fixed value whatever the taxable amount,
 * in the rate's own currency only.
 */
export function taxAmount(rate: TaxTerms, taxable: Decimal, currency: string): Decimal {
  const base = parseDecimal(taxable, 'taxable')
  if (rate.percentage_value !== null) return roundMoney(base.mul(rate.percentage_value).div(100), currency)
  if (rate.currency?.toUpperCase() !== currency.toUpperCase()) {
    throw new InvalidOperationError(`a fixed tax in ${rate.currency} cannot apply to an amount in ${currency}`)
  }
  return new D(rate.fixed_value!)
}
