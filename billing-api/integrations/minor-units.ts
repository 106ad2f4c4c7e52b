// Providers such as Stripe take integer amounts in the currency's minor unit (cents for USD,
// yen for JPY). Our amounts are already rounded to that unit, so the conversion is exact.
import { D, currencyPrecision } from '../pricing/index.js'

export function toMinorUnits(amount: string, currency: string): number {
  const minor = D(amount).times(D(10).pow(currencyPrecision(currency)))
  if (!minor.isInteger()) throw new Error(`${amount} ${currency} has more decimals than the currency allows`)
  if (minor.abs().greaterThan(Number.MAX_SAFE_INTEGER)) throw new Error(`${amount} ${currency} is too large for the provider`)
  return minor.toNumber()
}

/** The provider's integer minor-unit amount as our decimal string (2500 USD -> "25.00"). */
export function fromMinorUnits(minor: number, currency: string): string {
  if (!Number.isSafeInteger(minor)) throw new Error(`${minor} is not an integer amount in minor units`)
  return D(minor).div(D(10).pow(currencyPrecision(currency))).toFixed(currencyPrecision(currency))
}
