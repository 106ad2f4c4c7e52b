// A meter's reset_usage decides where an invoice line's usage starts:
// - BILLING_PERIOD: usage resets every period; the line bills its charge window's usage.
// - NEVER: usage is cumulative; the line bills everything from the start of its line item
//   (the subscription's start for the original line items) to the end of its charge window.
import type { Meter } from '../meters/meter.entity.js'
import type { Charge } from './charges.js'

export function usageStart(meter: Pick<Meter, 'reset_usage'>, c: Pick<Charge, 'periodStart' | 'lineItem'>): Date {
  if (meter.reset_usage !== 'NEVER') return c.periodStart
  const since = c.lineItem.start_date
  return since && since < c.periodStart ? since : c.periodStart
}
