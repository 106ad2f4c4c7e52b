// How billing reads usage: one function from a usage query to its rows. The default asks
// ClickHouse; a billing run swaps in one answered from its batch's prefetch
// (billing/usage-prefetch.ts), falling back to ClickHouse for what the prefetch does not hold.
import { queryMeterUsage } from '../../clickhouse/queries/meter-usage.js'
import { queryWeightedUsage } from '../../clickhouse/queries/weighted-usage.js'
import type { ClickHouse } from '../../clickhouse/client.js'
import type { UsageReader } from '../context.js'

export type { UsageReader }

export const clickhouseUsage = (ch: ClickHouse): UsageReader => (q) =>
  q.aggregation === 'WEIGHTED_SUM' ? queryWeightedUsage(ch, q) : queryMeterUsage(ch, q)

export const usageReader = (ctx: { ch: ClickHouse; usage?: UsageReader }): UsageReader => ctx.usage ?? clickhouseUsage(ctx.ch)
