// WEIGHTED_SUM reads from buckets: a worked month with gaps (figures computed by hand), and
// random events and boundaries against a decimal.js integral over the raw events.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { Decimal } from 'decimal.js'
import { ClickHouse } from '../client.js'
import { migrateClickHouse } from '../migrate.js'
import { directStage } from '../../test/support/writer.js'
import { auditMeter } from '../../aggregator/usage-audit.js'
import type { MeterDefinition } from '../../schemas/meters.js'
import type { UsageEvent } from '../../schemas/events.js'
import { testConfig } from '../../test/support/platform.js'
import { queryWeightedUsage, weightedValue } from './weighted-usage.js'

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

let offset = 0n
async function write(tenant: string, meters: MeterDefinition[], events: UsageEvent[]): Promise<void> {
  const source = { version: async () => 'v1', load: async () => meters }
  const stage = await directStage(ch, source)
  await stage.add({
    stream: `weighted/${tenant}/0`, first: offset, last: offset,
    records: [{ offset, batch: { batch_id: `b${offset}`, tenant_id: tenant, environment_id: 'env', ingested_at: Date.now(), events } }],
  })
  offset++
}

const ev = (id: string, customer: string, at: string, gb: string, source: string | null = 'api', disk = 'd1'): UsageEvent => ({
  event_id: id, event_name: 'storage', external_customer_id: customer, customer_id: null, timestamp: Date.parse(at), source,
  properties: JSON.stringify({ gb, disk }),
})

test('weightedValue: the integral over the length, half-up to 12 decimals', () => {
  assert.equal(weightedValue('250200000000', 2_592_000_000), '96.527777777778')
  assert.equal(weightedValue('0', 1), '0')
})

test('a month with gaps: the value holds until the next event, carried in from before the period', async () => {
  const tenant = 'weighted-month'
  const meter: MeterDefinition = {
    id: 'm-storage', tenant_id: tenant, environment_id: 'env', event_name: 'storage', filters: [],
    aggregation: { type: 'WEIGHTED_SUM', field: 'gb', group_by: 'disk' },
  }
  await write(tenant, [meter], [
    ev('a0', 'acme', '2026-10-20T00:00:00Z', '100'), // before November: holds from Nov 1
    ev('b1', 'acme', '2026-11-10T00:00:00Z', '999', 'batch'), // same instant as b2, lower event_id: holds for 0 ms
    ev('b2', 'acme', '2026-11-10T00:00:00Z', '40', 'batch', 'd2'),
    ev('c1', 'acme', '2026-11-25T12:00:00Z', '250'),
    ev('d1', 'acme', '2026-12-01T00:00:00Z', '7'), // after the period
    ev('x1', 'beta', '2026-11-16T00:00:00Z', '30'), // beta has nothing before: 0 until Nov 16
  ])
  const base = { tenantId: tenant, environmentId: 'env', meterId: meter.id, aggregation: 'WEIGHTED_SUM' as const, declaredGroupBy: 'disk' }
  const nov = { start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-12-01T00:00:00Z') }
  // November = 720 h. acme: 100 GB x 216 h (Nov 1-10) + 40 x 372 h (Nov 10 to Nov 25 12:00)
  // + 250 x 132 h (to Dec 1) = 21600 + 14880 + 33000 = 69480 GB h / 720 h = 96.5 GB.
  const [acme] = await queryWeightedUsage(ch, { ...base, ...nov, externalCustomerId: 'acme' })
  assert.deepEqual([acme.value, acme.event_count], ['96.5', '3'])
  // beta: 30 GB x 360 h (Nov 16 to Dec 1: 15 days) / 720 h = 15; both pooled: 111.5.
  const [beta] = await queryWeightedUsage(ch, { ...base, ...nov, externalCustomerId: 'beta' })
  assert.equal(beta.value, '15')
  const [pooled] = await queryWeightedUsage(ch, { ...base, ...nov, externalCustomerIds: ['acme', 'beta'] })
  assert.deepEqual([pooled.value, pooled.event_count], ['111.5', '4'])
  // By source, each span goes to the event that set its value: api 21600 + 33000 = 54600 / 720
  // = 75.8333..; batch 14880 / 720 = 20.6666..; they add up to 96.5.
  const bySource = await queryWeightedUsage(ch, { ...base, ...nov, externalCustomerId: 'acme', bySource: true })
  assert.deepEqual(bySource.map((r) => [r.source, r.value, r.event_count]), [['api', '75.833333333333', '1'], ['batch', '20.666666666667', '2']])
  const byDisk = await queryWeightedUsage(ch, { ...base, ...nov, externalCustomerId: 'acme', groupBy: ['disk'] })
  assert.deepEqual(byDisk.map((r) => [r.groups.disk, r.value]), [['d1', '75.833333333333'], ['d2', '20.666666666667']])
  // Mid-minute boundaries read the edge minutes from per-event rows, and carry 40 GB in from
  // 00:00:00 of the start's own minute. [Nov 10 00:00:30, Nov 25 12:00:30) = 1 339 200 000 ms:
  // 40 x 1 339 170 000 + 250 x 30 000 = 53 574 300 000 / 1 339 200 000 = 40.004704301075268..
  const [mid] = await queryWeightedUsage(ch, { ...base, externalCustomerId: 'acme', start: new Date('2026-11-10T00:00:30Z'), end: new Date('2026-11-25T12:00:30Z') })
  assert.deepEqual([mid.value, mid.event_count], ['40.004704301075', '1'])
  // Windows: each day its own average. Nov 9: 100; Nov 10: 40 (b1 held 0 ms); Nov 25: 12 h of 40
  // and 12 h of 250 = 145. Every November day has a value (carried in), so 30 rows.
  const days = await queryWeightedUsage(ch, { ...base, ...nov, externalCustomerId: 'acme', windowSize: 'DAY' })
  assert.equal(days.length, 30)
  const day = (d: string) => days.find((r) => r.window_start === `2026-11-${d} 00:00:00`)
  assert.deepEqual([day('09')?.value, day('09')?.event_count], ['100', '0'])
  assert.deepEqual([day('10')?.value, day('10')?.event_count], ['40', '2'])
  assert.deepEqual([day('25')?.value, day('25')?.event_count], ['145', '1'])
  assert.deepEqual([day('30')?.value, day('01')?.value], ['250', '100'])
  // A window cut by the range is averaged over its part: [Nov 25 06:00, Nov 25 13:30) by DAY is one
  // 7.5 h window: 6 h of 40 + 1.5 h of 250 = 615 / 7.5 = 82.
  const [cut] = await queryWeightedUsage(ch, { ...base, externalCustomerId: 'acme', windowSize: 'DAY', start: new Date('2026-11-25T06:00:00Z'), end: new Date('2026-11-25T13:30:00Z') })
  assert.deepEqual([cut.window_start, cut.value, cut.event_count], ['2026-11-25 00:00:00', '82', '1'])
  // Before any event: 0, no events.
  const [none] = await queryWeightedUsage(ch, { ...base, externalCustomerId: 'beta', start: new Date('2026-11-01T00:00:00Z'), end: new Date('2026-11-02T00:00:00Z') })
  assert.deepEqual([none.value, none.event_count], ['0', '0'])
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

test('random events and millisecond boundaries: the bucket read equals the integral over the raw events', async () => {
  const seed = Number(process.env.PROPERTY_SEED ?? Date.now() % 100_000)
  const rand = rng(seed)
  const tenant = `weighted-prop-${seed}`
  const meter: MeterDefinition = {
    id: 'm-w', tenant_id: tenant, environment_id: 'env', event_name: 'storage', filters: [], aggregation: { type: 'WEIGHTED_SUM', field: 'gb' },
  }
  const T0 = Date.parse('2026-10-31T22:00:00Z')
  const events: UsageEvent[] = []
  for (let i = 0; i < 300; i++) {
    const minute = T0 + Math.floor(rand() * 240) * 60_000
    const at = [minute, minute - 1, minute + 1, minute + Math.floor(rand() * 60_000)][Math.floor(rand() * 4)]
    const gb = (Math.floor(rand() * 1_000_000) / 1000).toFixed(3)
    events.push({ ...ev(`e${i}`, rand() < 0.5 ? 'c1' : 'c2', new Date(at).toISOString(), gb), timestamp: at })
  }
  await write(tenant, [meter], events.slice(0, 150))
  await write(tenant, [meter], events.slice(150))
  const integral = (customer: string, s: number, e: number): Decimal => {
    const pts = events.filter((x) => x.external_customer_id === customer)
      .sort((a, b) => a.timestamp - b.timestamp || (a.event_id < b.event_id ? -1 : a.event_id > b.event_id ? 1 : 0))
    let total = new Decimal(0)
    pts.forEach((p, i) => {
      const from = Math.max(p.timestamp, s)
      const to = Math.min(i + 1 < pts.length ? pts[i + 1].timestamp : e, e)
      if (to > from) total = total.plus(new Decimal(JSON.parse(p.properties).gb).times(to - from))
    })
    return total
  }
  for (let k = 0; k < 12; k++) {
    const s = T0 - 30 * 60_000 + Math.floor(rand() * 260 * 60_000)
    const e = s + 1 + Math.floor(rand() * 120 * 60_000)
    const base = { tenantId: tenant, environmentId: 'env', meterId: meter.id, aggregation: 'WEIGHTED_SUM' as const, start: new Date(s), end: new Date(e) }
    const what = `seed ${seed}, [${new Date(s).toISOString()}, ${new Date(e).toISOString()})`
    const [c1] = await queryWeightedUsage(ch, { ...base, externalCustomerId: 'c1' })
    assert.equal(c1.value, weightedValue(integral('c1', s, e).toFixed(), e - s), what)
    const inRange = events.filter((x) => x.external_customer_id === 'c1' && x.timestamp >= s && x.timestamp < e).length
    assert.equal(Number(c1.event_count), inRange, what)
    const [both] = await queryWeightedUsage(ch, base)
    assert.equal(both.value, weightedValue(integral('c1', s, e).plus(integral('c2', s, e)).toFixed(), e - s), what)
    for (const row of await queryWeightedUsage(ch, { ...base, externalCustomerId: 'c1', windowSize: 'HOUR' })) {
      const w = Date.parse(row.window_start!.replace(' ', 'T') + 'Z')
      const [ws, we] = [Math.max(w, s), Math.min(w + 3_600_000, e)]
      assert.equal(row.value, weightedValue(integral('c1', ws, we).toFixed(), we - ws), `${what} hour ${row.window_start}`)
      const inHour = events.filter((x) => x.external_customer_id === 'c1' && x.timestamp >= ws && x.timestamp < we).length
      assert.equal(Number(row.event_count), inHour, `${what} hour ${row.window_start} count`)
    }
    const audit = await auditMeter(ch, meter, new Date(s), new Date(e))
    assert.ok(audit.same && audit.raw.value === both.value, `${what}: audit ${JSON.stringify(audit.raw)} vs ${JSON.stringify(audit.buckets)}`)
  }
})
