// A ClickHouse database of the earlier write path (event_keys in RocksDB, activations in
// meter_activations, untagged bucket rows) migrates: what it counted stays counted once, a
// meter it had activated stays live without a second backfill, and a backfill it left half done
// is redone from the raw events without its partial rows.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { ClickHouse } from '../clickhouse/client.js'
import { migrateClickHouse } from '../clickhouse/migrate.js'
import { queryMeterUsage } from '../clickhouse/queries/meter-usage.js'
import type { IngestBatch, UsageEvent } from '../schemas/events.js'
import type { MeterDefinition } from '../schemas/meters.js'
import { storedKeyOf } from '../clickhouse/queries/dedup-keys.js'
import { checkText, eventShard, keyText } from '../schemas/shards.js'
import { testConfig } from '../test/support/platform.js'
import { testPool } from '../test/support/writer.js'
import { bucketRow, indexMeters, meterEventRow, meterHits, rawRow } from './meter-rows.js'
import { openStandaloneWriter, settleBackfills } from './writer.js'

const config = testConfig()
const chdbPath = `${config.clickhouse.chdbPath}-upgrade`
let ch: ClickHouse
before(() => {
  rmSync(chdbPath, { recursive: true, force: true })
  ch = ClickHouse.open({ ...config.clickhouse, chdbPath })
})
after(async () => {
  await ch?.close()
})

const T0 = Date.parse('2026-09-10T10:00:00Z')
const meter = (id: string, type: string): MeterDefinition => ({
  id, tenant_id: 'up', environment_id: 'env', event_name: 'call', filters: [], aggregation: type === 'COUNT' ? { type } : { type, field: 'n' },
})
const ev = (i: number): UsageEvent => ({
  event_id: `old-${i}`, event_name: 'call', external_customer_id: 'c1', customer_id: null, timestamp: T0 + i * 1000, source: null, properties: JSON.stringify({ n: i + 1 }),
})

test('a database of the earlier write path migrates and counts on exactly', async () => {
  await migrateClickHouse(ch, '0004_weighted_points.sql')
  const active = meter('up-sum', 'SUM') // activated by the earlier path: its buckets are complete
  const halfway = meter('up-count', 'COUNT') // its backfill started and never finished
  const batch: IngestBatch = { batch_id: 'old-batch', tenant_id: 'up', environment_id: 'env', ingested_at: T0, events: [] }
  const olds = Array.from({ length: 6 }, (_, i) => ev(i))
  const index = indexMeters([active, halfway])
  const raw = olds.map((e) => rawRow(batch, e))
  const events: unknown[][] = []
  const buckets: unknown[][] = []
  for (const e of olds) {
    const m = meterHits(index, 'up', 'env', e, {})!
    for (const hit of m.hits) {
      if (hit.meter.id === halfway.id && Number(e.event_id.split('-')[1]) >= 2) continue // the backfill got through two events
      events.push(meterEventRow(batch, e, hit, m.props))
      buckets.push(bucketRow(batch, e, hit, m.props).slice(0, 14)) // the earlier table had no origin column
    }
  }
  await ch.insertCompact('events_raw', raw)
  await ch.insertCompact('meter_events', events)
  await ch.insertCompact('meter_buckets', buckets)
  await ch.command(`INSERT INTO ${ch.table('event_keys')}
    SELECT reinterpretAsUInt64(reverse(substring(h, 1, 8))), reinterpretAsUInt64(reverse(substring(h, 9, 8)))
    FROM (SELECT MD5(concat(tenant_id, '\\0', environment_id, '\\0', event_id)) AS h FROM ${ch.table('events_raw')})`)
  await ch.insertCompact('meter_activations', [[active.id, '1790000000000000'], [halfway.id, '0']])

  const applied = await migrateClickHouse(ch)
  assert.deepEqual(applied, ['0005_sharded_write_path.sql', '0006_dedup_horizon.sql', '0007_dedup_by_time.sql', '0008_dedup_lookup_layout.sql'])
  const [layout] = await ch.query<{ primary_key: string; sorting_key: string }>(
    `SELECT primary_key, sorting_key FROM system.tables WHERE database = '${ch.database}' AND name = 'dedup_events'`,
  )
  assert.deepEqual({ ...layout }, { primary_key: 'shard, ms', sorting_key: 'shard, ms, key, check' }, 'the lookup layout (0008): keys found by (shard, ms)')
  // The counted events' keys, under the identity (event_id, timestamp), each with its event's time and its id's shard;
  // old-0 was sent without a timestamp (stamped with its batch's arrival, T0): it keeps its id's key.
  const keys = await ch.query<{ shard: number; ms: string; key: string; check: string }>(
    `SELECT shard, toString(ms) AS ms, toString(key) AS key, toString(check) AS check FROM ${ch.table('dedup_events')} ORDER BY ms`,
  )
  assert.deepEqual(keys.map((k) => ({ ...k, shard: Number(k.shard) })), olds.map((e) => {
    const k = storedKeyOf('up', 'env', e.event_id, e.timestamp, batch.ingested_at)
    return { shard: k.shard, ms: String(e.timestamp), key: keyText(k.d), check: checkText(k.d) }
  }), 'the earlier keys moved to the time-ordered store')
  assert.equal(eventShard('up', 'env', 'old-1') >= 0, true)

  const writer = await openStandaloneWriter({ ch, pg: testPool(), meters: { version: async () => 'v', load: async () => [active, halfway] }, meterRefreshMs: 0, log: () => {} })
  // The client re-sends the old events beside new ones.
  const news = Array.from({ length: 4 }, (_, i) => ({ ...ev(100 + i), event_id: `new-${i}` }))
  await writer.stage.add({ stream: 's', first: 0n, last: 0n, records: [{ offset: 0n, batch: { ...batch, batch_id: 'retry', events: [...olds, ...news] } }] })
  await settleBackfills(writer, [active.id, halfway.id])

  const read = async (m: MeterDefinition) => (await queryMeterUsage(ch, {
    tenantId: 'up', environmentId: 'env', meterId: m.id, aggregation: m.aggregation.type as 'SUM', start: new Date(T0 - 60_000), end: new Date(T0 + 86_400_000),
  }))[0]?.value
  assert.equal(await read(active), String(21 + 101 + 102 + 103 + 104), 'old events once (1..6), new ones once')
  assert.equal(await read(halfway), '10', 'the half-done backfill was redone whole: 6 old + 4 new')
})
