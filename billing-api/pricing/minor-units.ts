// A decimal amount as an integer count of its currency's minor unit, for Prometheus counters
// (float64: exact up to 2^53 minor units, 90 trillion dollars in cents). Prometheus cannot sum
// decimal strings; the books stay in Postgres, exact.
import { Decimal } from 'decimal.js'
import { currencyPrecision } from './money.js'

/** undefined when the amount or the currency is unreadable, or the amount has finer digits than the currency. */
export function toMinorUnits(amount: string | undefined, currency: string): number | undefined {
  if (amount === undefined) return undefined
  let value: Decimal
  let precision: number
  try {
    value = new Decimal(amount)
    precision = currencyPrecision(currency)
  } catch {
    return undefined
  }
  const minor = value.times(new Decimal(10).pow(precision))
  if (!minor.isInteger() || minor.abs().greaterThan(Number.MAX_SAFE_INTEGER)) return undefined
  return minor.toNumber()
}
