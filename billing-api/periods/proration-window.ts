// Pure: the part of a whole-period amount for a window [from, to) inside the period. Up to the
// period end it is proration.ts's remainingAmount (so it matches what a quantity change
// credits and debits); a window ending earlier (an add-on with an end date) is the amount
// times the window's second-exact share, rounded once, half-up to the currency.
import { D, toMoneyString } from '../pricing/index.js'
import { remainingAmount } from './proration.js'
import type { CadencePeriod } from './cadence.js'

const seconds = (d: Date): number => Math.floor(d.getTime() / 1000)

export function windowAmount(amount: string, period: CadencePeriod, from: Date, to: Date, currency: string): string {
  if (to.getTime() === period.end.getTime()) return remainingAmount(amount, period.start, period.end, from, currency)
  const total = seconds(period.end) - seconds(period.start)
  if (total <= 0) throw new RangeError('the period must end after it starts')
  const share = Math.max(0, Math.min(seconds(to), seconds(period.end)) - Math.max(seconds(from), seconds(period.start)))
  return toMoneyString(D(amount).times(share).div(total), currency)
}
