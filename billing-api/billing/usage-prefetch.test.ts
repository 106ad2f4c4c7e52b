// The billing run's prefetch answers exactly what the direct usage read answers (the same rows,
// in the same order), and declines what it does not hold. Events go through the aggregator's
// write stage into chDB; periods start and end mid-minute, so edges and buckets both count.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { queryMeterUsage, type UsageAggregation, type UsageQuery } from '../../clickhouse/queries/meter-usage.js'
import type { MeterDefinition } from '../../schemas/meters.js'
import { directStage } from '../../test/support/writer.js'
import type { UsageEvent } from '../../schemas/events.js'
import { useChdb } from '../../test/support/chdb.js'
import { PrefetchedUsage } from './usage-prefetch.js'

const ch = useChdb('prefetch')

const AGGS: UsageAggregation[] = ['SUM', 'COUNT', 'COUNT_UNIQUE', 'MAX', 'LATEST', 'AVG']
const T0 = Date.parse('2026-10-31T23:00:00Z') // spans a month boundary

test('prefetched period usage equals the direct read for totals, sources and groups', async () => {
  let s = 7
  const rand = () => ((s = (s * 1_103_515_245 + 12_345) % 2 ** 31), s / 2 ** 31)
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]
  const tenant = 'prefetch'
  const meters: MeterDefinition[] = AGGS.map((type) => ({
    id: `pm-${type}`, tenant_id: tenant, environment_id: 'env', event_name: 'use', filters: [],
    aggregation: { type, field: type === 'COUNT' ? null : type === 'COUNT_UNIQUE' ? 'user' : 'n', group_by: 'region' },
  }))
  const stage = await directStage(ch(), { version: async () => 'v1', load: async () => meters })
  const events: UsageEvent[] = Array.from({ length: 1500 }, (_, i) => {
    const minute = T0 + Math.floor(rand() * 120) * 60_000
    return {
      event_id: `p-${i % 1400}`, // the last hundred re-send earlier ids and must not count
      event_name: 'use', external_customer_id: pick(['c1', 'c2', 'c3']), customer_id: null,
      timestamp: pick([minute, minute - 1, minute + Math.floor(rand() * 60_000)]), source: pick(['api', 'batch', null]),
      properties: JSON.stringify({ n: (Math.floor(rand() * 2_000_000) / 1000 - 500).toFixed(3), user: `u${Math.floor(rand() * 30)}`, ...(rand() < 0.9 ? { region: pick(['eu', 'us', 'ünï']) } : {}) }),
    }
  })
  await stage.add({ stream: 'prefetch/0', first: 0n, last: 0n, records: [{ offset: 0n, batch: { batch_id: 'pb0', tenant_id: tenant, environment_id: 'env', ingested_at: T0, events } }] })

  const periods: [Date, Date][] = [[new Date(T0 - 37_123), new Date(T0 + 119 * 60_000 + 22_877)], [new Date(T0 + 90_500), new Date(T0 + 91_000)]]
  for (let i = 0; i < 4; i++) {
    const a = T0 + Math.floor(rand() * 100 * 60_000)
    periods.push([new Date(a), new Date(a + 1 + Math.floor(rand() * 60 * 60_000))])
  }
  const customers = ['c1', 'c2', 'c3', 'c-none']
  for (const [start, end] of periods) {
    const prefetched = new PrefetchedUsage()
    await prefetched.load(ch(), {
      tenantId: tenant, environmentId: 'env', start, end, customers,
      meters: new Map(meters.map((m) => [m.id, m.aggregation.type as UsageAggregation])),
    })
    for (const m of meters) {
      const agg = m.aggregation.type as UsageAggregation
      for (const customer of customers) {
        const base: UsageQuery = { tenantId: tenant, environmentId: 'env', meterId: m.id, aggregation: agg, declaredGroupBy: 'region', externalCustomerIds: [customer], start, end }
        for (const q of [base, { ...base, bySource: true }, { ...base, groupBy: ['region'] }]) {
          const hit = prefetched.answer(q)
          const what = `${agg} ${customer} [${start.toISOString()}, ${end.toISOString()}) ${JSON.stringify({ bySource: q.bySource, groupBy: q.groupBy })}`
          if (agg === 'COUNT_UNIQUE') assert.equal(hit, undefined, what)
          // (the direct read's rows carry window_start and source as undefined; JSON drops them)
          else assert.deepEqual(hit, JSON.parse(JSON.stringify(await queryMeterUsage(ch(), q))), what)
        }
      }
      // A parent's pooled customers: added up per customer where the aggregation allows it.
      const pooled: UsageQuery = { tenantId: tenant, environmentId: 'env', meterId: m.id, aggregation: agg, declaredGroupBy: 'region', externalCustomerIds: ['c1', 'c2', 'c-none'], start, end }
      for (const q of [pooled, { ...pooled, bySource: true }, { ...pooled, groupBy: ['region'] }]) {
        const hit = prefetched.answer(q)
        const what = `pooled ${agg} [${start.toISOString()}, ${end.toISOString()}) ${JSON.stringify({ bySource: q.bySource, groupBy: q.groupBy })}`
        if (agg === 'COUNT_UNIQUE' || agg === 'LATEST') assert.equal(hit, undefined, what)
        else assert.deepEqual(hit, JSON.parse(JSON.stringify(await queryMeterUsage(ch(), q))), what)
      }
      // What the prefetch does not hold goes to ClickHouse.
      const sum: UsageQuery = { tenantId: tenant, environmentId: 'env', meterId: 'pm-SUM', aggregation: 'SUM', declaredGroupBy: 'region', externalCustomerIds: ['c1'], start, end }
      assert.equal(prefetched.answer({ ...sum, externalCustomerIds: ['c1', 'c-other'] }), undefined, 'a pooled customer not read')
      assert.equal(prefetched.answer({ ...sum, windowSize: 'HOUR' }), undefined, 'windows')
      assert.equal(prefetched.answer({ ...sum, groupBy: ['user'] }), undefined, 'an undeclared property')
      assert.equal(prefetched.answer({ ...sum, externalCustomerIds: ['c-other'] }), undefined, 'a customer not read')
      assert.equal(prefetched.answer({ ...sum, start: new Date(start.getTime() + 1) }), undefined, 'another window of the period')
      assert.equal(prefetched.answer({ ...sum, tenantId: 'another-tenant' }), undefined, 'another tenant')
    }
  }
})
