// Usage for billing-shaped reads (a projected invoice) from the live counters.
import type { BillingContext, UsageReader } from '../context.js'
import { clickhouseUsage } from '../meters/index.js'
import type { LiveAggregation, LiveCounters } from './counters.js'

/**
 * Usage for billing-shaped reads (a projected invoice) answered from the counters where they
 * hold exactly what is asked: one customer, no windows, groups or sources, an aggregation
 * kept in memory. Everything else is read from ClickHouse. `asOf` collects the oldest
 * usage_as_of of the reads (null: some read cannot tell).
 */
export function liveUsageReader(ctx: BillingContext, counters: LiveCounters, asOf: { value: number | null | undefined }): UsageReader {
  const fallback = clickhouseUsage(ctx.ch)
  const memory = new Set(['SUM', 'COUNT', 'MAX', 'AVG'])
  return async (q) => {
    const simple = q.externalCustomerId !== undefined && !q.externalCustomerIds && !q.windowSize && !q.groupBy?.length && !q.bySource && !q.byCustomer
    if (!simple || !memory.has(q.aggregation)) {
      const started = await counters.readAsOf(q.meterId)
      const rows = await fallback(q)
      asOf.value = asOf.value === undefined ? started : asOf.value === null || started === null ? null : Math.min(asOf.value, started)
      return rows
    }
    const v = await counters.get({
      tenantId: q.tenantId, environmentId: q.environmentId, meterId: q.meterId, aggregation: q.aggregation as LiveAggregation,
      externalCustomerId: q.externalCustomerId!, start: q.start, end: q.end,
    })
    asOf.value = asOf.value === undefined ? v.asOf : asOf.value === null || v.asOf === null ? null : Math.min(asOf.value, v.asOf)
    return [{ value: v.value, event_count: v.event_count, groups: {} }]
  }
}
