// Property test: for random events (with resent duplicates) written through the aggregator's
// write stage, and random millisecond boundaries, the bucket-and-edge read equals a recount over
// the raw events with decimal.js, for every aggregation, with windows, group_by and per source.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { Decimal } from 'decimal.js'
import { ClickHouse } from '../client.js'
import { migrateClickHouse } from '../migrate.js'
import type { MeterDefinition } from '../../schemas/meters.js'
import type { Piece } from '../../aggregator/write-stage.js'
import { directStage } from '../../test/support/writer.js'
import type { UsageEvent } from '../../schemas/events.js'
import { testConfig } from '../../test/support/platform.js'
import { queryMeterUsage, splitRange, type UsageAggregation } from './meter-usage.js'

const config = testConfig()
let ch: ClickHouse

before(async () => {
  rmSync(config.clickhouse.chdbPath, { recursive: true, force: true })
  ch = ClickHouse.open(config.clickhouse)
  await migrateClickHouse(ch)
})
after(async () => {
  await ch?.close()
})

/** Seeded PRNG, so a failure can be replayed from the printed seed. */
function rng(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const AGGS: UsageAggregation[] = ['SUM', 'COUNT', 'COUNT_UNIQUE', 'MAX', 'LATEST', 'AVG']
const T0 = Date.parse('2026-10-31T22:00:00Z') // spans a month boundary: two partitions

interface Expected {
  value: Decimal
  count: number
}

function recount(agg: UsageAggregation, events: UsageEvent[]): Expected {
  const vals = events.map((e) => JSON.parse(e.properties))
  const count = events.length
  if (agg === 'COUNT') return { value: new Decimal(count), count }
  if (agg === 'COUNT_UNIQUE') return { value: new Decimal(new Set(vals.map((p) => String(p.user))).size), count }
  const nums = vals.map((p) => new Decimal(p.n))
  if (agg === 'SUM' || agg === 'AVG') return { value: nums.reduce((a, b) => a.plus(b), new Decimal(0)), count }
  if (agg === 'MAX') return { value: count ? Decimal.max(...nums) : new Decimal(0), count }
  let best = -1
  events.forEach((e, i) => {
    const b = events[best]
    if (best < 0 || e.timestamp > b.timestamp || (e.timestamp === b.timestamp && e.event_id > b.event_id)) best = i
  })
  return { value: best < 0 ? new Decimal(0) : nums[best], count }
}

test('bucket + edge reads equal a raw recount for random events and boundaries, every aggregation', async () => {
  const seed = Number(process.env.PROPERTY_SEED ?? Date.now() % 100_000)
  const rand = rng(seed)
  const tenant = `prop-${seed}`
  const meters: MeterDefinition[] = AGGS.map((type) => ({
    id: `m-${type}`, tenant_id: tenant, environment_id: 'env', event_name: 'use', filters: [],
    aggregation: { type, field: type === 'COUNT' ? null : type === 'COUNT_UNIQUE' ? 'user' : 'n', group_by: 'region' },
  }))
  const source = { version: async () => 'v1', load: async () => meters }
  const stage = await directStage(ch, source)

  // Events cluster on minute boundaries (exactly on, just before, just after) and elsewhere.
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]
  const randomTs = () => {
    const minute = T0 + Math.floor(rand() * 240) * 60_000
    return pick([minute, minute - 1, minute + 1, minute + Math.floor(rand() * 60_000)])
  }
  const counted: UsageEvent[] = []
  const seen = new Set<string>()
  const pieces: Piece[] = []
  let offset = 0n
  for (let p = 0; p < 12; p++) {
    const events: UsageEvent[] = []
    for (let i = 0; i < 150; i++) {
      // One event in ten re-sends an earlier event (its id and timestamp) with other values: it must not count.
      const original = counted.length > 0 && rand() < 0.1 ? pick(counted) : undefined
      const id = original ? original.event_id : `ev-${p}-${i}`
      const e: UsageEvent = {
        event_id: id, event_name: 'use', external_customer_id: pick(['c1', 'c2', 'c3']), customer_id: null, timestamp: original ? original.timestamp : randomTs(),
        source: pick(['api', 'batch', null]),
        properties: JSON.stringify({ n: (Math.floor(rand() * 2_000_000) / 1000 - 500).toFixed(3), user: `u${Math.floor(rand() * 40)}`, region: pick(['eu', 'us']) }),
      }
      events.push(e)
      if (!seen.has(id)) {
        seen.add(id)
        counted.push(e)
      }
    }
    pieces.push({
      stream: `prop/${seed}/0`, first: offset, last: offset,
      records: [{ offset, batch: { batch_id: `b${p}`, tenant_id: tenant, environment_id: 'env', ingested_at: T0, events } }],
    })
    offset++
  }
  // Two writes: resends hit both the dedup store (event_keys) and the same write.
  await Promise.all(pieces.slice(0, 6).map((p) => stage.add(p)))
  await Promise.all(pieces.slice(6).map((p) => stage.add(p)))

  const checks: [Date, Date][] = [[new Date(T0), new Date(T0 + 240 * 60_000)], [new Date(T0 + 60_000), new Date(T0 + 61_000)]]
  for (let i = 0; i < 14; i++) {
    const a = T0 - 30_000 + Math.floor(rand() * 250 * 60_000)
    const b = a + 1 + Math.floor(rand() * 120 * 60_000)
    checks.push([new Date(a), new Date(b)])
  }
  for (const [start, end] of checks) {
    const within = counted.filter((e) => e.timestamp >= start.getTime() && e.timestamp < end.getTime())
    for (const m of meters) {
      const agg = m.aggregation.type as UsageAggregation
      const base = { tenantId: tenant, environmentId: 'env', meterId: m.id, aggregation: agg, declaredGroupBy: 'region', start, end }
      const what = `seed ${seed}, ${agg}, [${start.toISOString()}, ${end.toISOString()})`
      const [total] = await queryMeterUsage(ch, base)
      const want = recount(agg, within)
      assert.ok(new Decimal(total.value).eq(want.value), `${what}: ${total.value} != ${want.value}`)
      assert.equal(Number(total.event_count), want.count, what)

      const [c2] = await queryMeterUsage(ch, { ...base, externalCustomerId: 'c2' })
      assert.ok(new Decimal(c2.value).eq(recount(agg, within.filter((e) => e.external_customer_id === 'c2')).value), `${what} c2`)

      for (const row of await queryMeterUsage(ch, { ...base, groupBy: ['region'], bySource: true })) {
        const part = within.filter((e) => JSON.parse(e.properties).region === row.groups.region && (e.source ?? '') === row.source)
        assert.ok(new Decimal(row.value).eq(recount(agg, part).value), `${what} region ${row.groups.region} source ${row.source}`)
      }
      for (const row of await queryMeterUsage(ch, { ...base, windowSize: 'HOUR' })) {
        const h = Date.parse(row.window_start!.replace(' ', 'T') + 'Z')
        const part = within.filter((e) => e.timestamp >= h && e.timestamp < h + 3_600_000)
        assert.ok(new Decimal(row.value).eq(recount(agg, part).value), `${what} hour ${row.window_start}`)
      }
    }
  }
})

test('splitRange: whole minutes inside, the partial minutes at the edges', () => {
  const t = (s: string) => Date.parse(`2026-10-01T${s}Z`)
  assert.deepEqual(splitRange(new Date(t('00:00:00')), new Date(t('01:00:00'))), { interior: [t('00:00:00'), t('01:00:00')], edges: [] })
  assert.deepEqual(splitRange(new Date(t('00:00:30')), new Date(t('00:05:10'))), {
    interior: [t('00:01:00'), t('00:05:00')], edges: [[t('00:00:30'), t('00:01:00')], [t('00:05:00'), t('00:05:10')]],
  })
  assert.deepEqual(splitRange(new Date(t('00:00:30')), new Date(t('00:00:40'))), { interior: null, edges: [[t('00:00:30'), t('00:00:40')]] })
  assert.deepEqual(splitRange(new Date(t('00:00:30')), new Date(t('00:01:20'))), { interior: null, edges: [[t('00:00:30'), t('00:01:20')]] })
})
