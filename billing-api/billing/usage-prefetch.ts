// A billing run's usage, read for a whole claimed batch of subscriptions at once. An invoice
// line asks for its quantity, its usage per source and per declared group value: three reads
// per line, each a ClickHouse statement with a fixed cost of several milliseconds. Here the
// subscriptions that share a period are read in one statement (clickhouse/queries/period-usage.ts)
// and the invoices' reads are answered from it. What the prefetch does not hold exactly (another
// window of the period, pooled customers, windows, COUNT_UNIQUE, another property) goes to
// ClickHouse as before, so the answer is always the one the direct read gives.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { ClickHouse } from '../../clickhouse/client.js'
import type { UsageAggregation, UsageQuery, UsageRow } from '../../clickhouse/queries/meter-usage.js'
import { queryPeriodUsage, type PeriodUsageRow } from '../../clickhouse/queries/period-usage.js'
import { D } from '../pricing/index.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import { MeterSchema } from '../meters/meter.entity.js'
import type { UsageReader } from '../meters/index.js'
import { SubscriptionLineItemSchema, SubscriptionSchema, type Subscription } from '../subscriptions/subscription.entity.js'

const VALUE: Record<Exclude<UsageAggregation, 'COUNT_UNIQUE'>, (r: PeriodUsageRow) => string> = {
  SUM: (r) => r.sum,
  AVG: (r) => r.sum,
  COUNT: (r) => r.count,
  MAX: (r) => r.max,
  LATEST: (r) => r.latest,
}

/** How rows of several customers combine into the pooled read's rows (exact decimals). */
const POOLED: Partial<Record<UsageAggregation, 'add' | 'max'>> = { SUM: 'add', AVG: 'add', COUNT: 'add', MAX: 'max' }

function pooledRows(rows: PeriodUsageRow[], how: 'add' | 'max'): PeriodUsageRow[] {
  const merged = new Map<string, PeriodUsageRow>()
  for (const r of rows) {
    const k = `${r.level}\u0000${r.source}\u0000${r.group_value}`
    const m = merged.get(k)
    if (!m) {
      merged.set(k, { ...r })
      continue
    }
    m.count = D(m.count).plus(r.count).toFixed()
    m.sum = D(m.sum).plus(r.sum).toFixed()
    if (how === 'max' && D(r.max).gt(m.max)) m.max = r.max
  }
  return [...merged.values()]
}

/** ClickHouse orders strings by their bytes; so must we, where order reaches apportioned cents. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

const periodKey = (tenantId: string, environmentId: string, start: Date, end: Date) =>
  `${tenantId}\u0000${environmentId}\u0000${start.getTime()}\u0000${end.getTime()}`

export class PrefetchedUsage {
  /** period -> meter \0 customer -> rows (total, per source, per group value) */
  private readonly periods = new Map<string, Map<string, PeriodUsageRow[]>>()
  /** period -> meter -> its aggregation, for the meters read */
  private readonly meters = new Map<string, Map<string, UsageAggregation>>()
  /** period -> the customers read */
  private readonly customers = new Map<string, Set<string>>()

  async load(ch: ClickHouse, q: { tenantId: string; environmentId: string; start: Date; end: Date; customers: string[]; meters: Map<string, UsageQuery['aggregation']> }): Promise<void> {
    // a distinct count and a time-weighted average cannot be split and added: read directly
    const meterIds = [...q.meters].filter(([, agg]) => agg !== 'COUNT_UNIQUE' && agg !== 'WEIGHTED_SUM').map(([id]) => id)
    const rows = await queryPeriodUsage(ch, { ...q, meterIds, externalCustomerIds: q.customers })
    const key = periodKey(q.tenantId, q.environmentId, q.start, q.end)
    const byCustomer = new Map<string, PeriodUsageRow[]>()
    for (const r of rows) {
      const k = `${r.meter_id}\u0000${r.external_customer_id}`
      const list = byCustomer.get(k)
      if (list) list.push(r)
      else byCustomer.set(k, [r])
    }
    this.periods.set(key, byCustomer)
    this.meters.set(key, new Map(meterIds.map((id) => [id, q.meters.get(id) as UsageAggregation])))
    this.customers.set(key, new Set(q.customers))
  }

  /** The rows the direct read would return, or undefined where the prefetch cannot tell. */
  answer(q: UsageQuery): UsageRow[] | undefined {
    const customers = q.externalCustomerIds === undefined ? (q.externalCustomerId === undefined ? undefined : [q.externalCustomerId])
      : q.externalCustomerId === undefined ? q.externalCustomerIds : undefined
    const groupBy = q.groupBy ?? []
    if (!customers?.length || q.windowSize || groupBy.length > 1) return undefined
    if (groupBy.length === 1 && (groupBy[0] !== q.declaredGroupBy || q.bySource)) return undefined
    const key = periodKey(q.tenantId, q.environmentId, q.start, q.end)
    const agg = this.meters.get(key)?.get(q.meterId)
    if (agg === undefined || agg !== q.aggregation || agg === 'COUNT_UNIQUE') return undefined
    const read = this.customers.get(key)!
    if (customers.some((c) => !read.has(c))) return undefined
    // A parent's pooled usage (several customers) adds up per customer, except LATEST (the
    // rows keep the latest value, not its timestamp): that one is read directly.
    if (customers.length > 1 && !POOLED[agg]) return undefined
    const pool = POOLED[agg]
    const rows = customers.length === 1 ? this.periods.get(key)!.get(`${q.meterId}\u0000${customers[0]}`) ?? []
      : pooledRows(customers.flatMap((c) => this.periods.get(key)!.get(`${q.meterId}\u0000${c}`) ?? []), pool!)
    const value = VALUE[agg]
    if (q.bySource) {
      return rows.filter((r) => r.level === 'source').sort((a, b) => byBytes(a.source, b.source))
        .map((r) => ({ value: value(r), event_count: r.count, groups: {}, source: r.source }))
    }
    if (groupBy.length === 1) {
      return rows.filter((r) => r.level === 'group').sort((a, b) => byBytes(a.group_value, b.group_value))
        .map((r) => ({ value: value(r), event_count: r.count, groups: { [groupBy[0]]: r.group_value } }))
    }
    const total = rows.find((r) => r.level === 'total')
    // No events: the direct read's one row of an empty aggregation.
    return [total ? { value: value(total), event_count: total.count, groups: {} } : { value: '0', event_count: '0', groups: {} }]
  }

  reader(fallback: UsageReader): UsageReader {
    return (q) => {
      const hit = this.answer(q)
      return hit ? Promise.resolve(hit) : fallback(q)
    }
  }
}

/** `subs` grouped by (tenant, environment, current period): one usage statement each. */
function byPeriod(subs: Subscription[]): Subscription[][] {
  const groups = new Map<string, Subscription[]>()
  for (const s of subs) {
    const key = periodKey(s.tenant_id, s.environment_id, s.current_period_start, s.current_period_end)
    groups.set(key, [...(groups.get(key) ?? []), s])
  }
  return [...groups.values()]
}

/**
 * Reads the current period's usage of `subs` (the subscriptions a billing batch invoices for
 * their own customer): one statement per (tenant, environment, period), for the meters of their
 * usage line items.
 */
export async function prefetchPeriodUsage(ch: ClickHouse, em: EntityManager, subs: Subscription[]): Promise<PrefetchedUsage> {
  const prefetched = new PrefetchedUsage()
  for (const group of byPeriod(subs)) {
    const { tenant_id, environment_id, current_period_start: start, current_period_end: end } = group[0]
    const scope = { tenant_id, environment_id }
    const lineItems = await em.find(SubscriptionLineItemSchema, { ...scope, subscription_id: { $in: group.map((s) => s.id) }, meter_id: { $ne: null } })
    const meterIds = [...new Set(lineItems.map((l) => l.meter_id!))]
    if (meterIds.length === 0) continue
    const meters = await em.find(MeterSchema, { ...scope, id: { $in: meterIds } })
    // a parent's usage pools its inherited children's customers: read theirs too
    const parents = group.filter((s) => s.subscription_type === 'PARENT').map((s) => s.id)
    const children = parents.length
      ? await em.find(SubscriptionSchema, { ...scope, parent_subscription_id: { $in: parents }, subscription_type: 'INHERITED', status: 'published' })
      : []
    const customerIds = [...new Set([...group.map((s) => s.customer_id), ...children.map((c) => c.customer_id)])]
    const customers = await em.find(CustomerSchema, { ...scope, id: { $in: customerIds } })
    await prefetched.load(ch, {
      tenantId: tenant_id, environmentId: environment_id, start, end,
      customers: customers.map((c) => c.external_id), meters: new Map(meters.map((m) => [m.id, m.aggregation.type])),
    })
  }
  return prefetched
}

/** prefetchPeriodUsage from rows a billing batch already loaded (batch-reads.ts): one statement per (scope, period), nothing read from Postgres. */
export async function prefetchBatchUsage(
  ch: ClickHouse, subs: Subscription[], scopeOf: (group: Subscription[]) => { meters: Map<string, UsageQuery['aggregation']>; customers: string[] },
): Promise<PrefetchedUsage> {
  const prefetched = new PrefetchedUsage()
  for (const group of byPeriod(subs)) {
    const { tenant_id, environment_id, current_period_start: start, current_period_end: end } = group[0]
    const { meters, customers } = scopeOf(group)
    if (meters.size === 0 || customers.length === 0) continue
    await prefetched.load(ch, { tenantId: tenant_id, environmentId: environment_id, start, end, customers, meters })
  }
  return prefetched
}
