// Measures the commitment windows of windowed line commitments (I/O; the math is in
// pricing/commitment.ts). Windows: UTC days, or each day's commitment_time_buckets.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import { MeterSchema } from '../meters/meter.entity.js'
import { meterUsage, roundQuantity, type UsageRequest, usageReader } from '../meters/index.js'
import { commitmentWindows, D, type TimeBucket } from '../pricing/index.js'
import type { MeasuredCharge } from './charges.js'

/** Sums of hourly (minutely) values are exact only for additive aggregations. */
const ADDITIVE = new Set(['SUM', 'COUNT'])

/**
 * Adds windowQuantities to the charges whose line item has a windowed commitment; others pass
 * unchanged. `customersOf` gives the usage filter the line's total was measured with.
 */
export async function measureCommitmentWindows(
  ctx: BillingContext, em: EntityManager, customersOf: (c: MeasuredCharge) => Promise<Pick<UsageRequest, 'external_customer_id' | 'external_customer_ids'>>,
  charges: MeasuredCharge[],
): Promise<MeasuredCharge[]> {
  const read = usageReader(ctx)
  return Promise.all(
    charges.map(async (c) => {
      const li = c.lineItem
      const committed = li.commitment_amount != null || li.commitment_quantity != null
      if (c.price.type !== 'USAGE' || !committed || !li.commitment_windowed || !c.price.meter_id) return c
      const meter = await em.findOneOrFail(MeterSchema, { id: c.price.meter_id, tenant_id: li.tenant_id, environment_id: li.environment_id })
      const buckets: TimeBucket[] | null = li.price_override?.commitment_time_buckets ?? null
      const windows = commitmentWindows(c.periodStart, c.periodEnd, buckets)
      // the same customers as the line's total usage
      const customer = await customersOf(c)
      const range = (start: Date, end: Date) => ({ ...customer, start_time: start.toISOString(), end_time: end.toISOString() })
      if (!ADDITIVE.has(meter.aggregation.type)) {
        // MAX, LATEST, AVG, COUNT_UNIQUE: one read per window
        const values = await Promise.all(windows.map(async (w) => (await meterUsage(read, meter, range(w.start, w.end))).value))
        return { ...c, windowQuantities: values, windowShares: windows.map((w) => w.share) }
      }
      // One read in the finest step the windows need, each step added to the window holding it.
      const minutes = (buckets ?? []).some((b) => b.start.minute !== 0 || b.end.minute !== 0)
      const usage = await meterUsage(read, meter, { ...range(c.periodStart, c.periodEnd), window_size: buckets ? (minutes ? 'MINUTE' : 'HOUR') : 'DAY' }, { raw: true })
      const sums = windows.map(() => D(0))
      for (const item of usage.items) {
        // a DAY step starts at midnight, before a period that starts mid-day
        const at = Math.max(new Date(item.window_start!).getTime(), c.periodStart.getTime())
        const i = windows.findIndex((w) => w.start.getTime() <= at && at < w.end.getTime())
        if (i >= 0) sums[i] = sums[i].plus(item.value)
      }
      return { ...c, windowQuantities: sums.map((s) => roundQuantity(s.toString(), meter.rounding)), windowShares: windows.map((w) => w.share) }
    }),
  )
}
