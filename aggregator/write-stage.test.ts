// Crash replays through the write stage into chDB, where the replay does not come back as it
// was written: at other offsets and in another grouping (a restarted in-memory broker fed again
// from the ingest spool), shorter than the write that crashed, and crashing again itself. Each
// crash falls between the bucket insert and the event keys, the one window the ledger covers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Decimal } from 'decimal.js'
import { queryMeterUsage } from '../clickhouse/queries/meter-usage.js'
import { formatLedger, parseLedger, recordFingerprint } from '../clickhouse/queries/bucket-ledger.js'
import type { IngestBatch, UsageEvent } from '../schemas/events.js'
import type { MeterDefinition } from '../schemas/meters.js'
import { useChdb } from '../test/support/chdb.js'
import { ActiveMeters } from './active-meters.js'
import { MeterCache } from './meter-cache.js'
import { WriteStage, type Piece } from './write-stage.js'

const ch = useChdb('write-stage')

const OCT_31 = Date.parse('2026-10-31T23:59:00Z') // the batches span two month parts

function batches(tenant: string, n: number, perBatch: number): IngestBatch[] {
  return Array.from({ length: n }, (_, b) => ({
    batch_id: `batch_${b}`, tenant_id: tenant, environment_id: 'env', ingested_at: OCT_31,
    events: Array.from({ length: perBatch }, (_, i): UsageEvent => ({
      event_id: `${b}-${i}`, event_name: 'call', external_customer_id: 'c1', customer_id: null,
      timestamp: OCT_31 + i * 7_000, source: null, properties: JSON.stringify({ n: b * 100 + i }),
    })),
  }))
}

/** A restarted aggregator: a new write stage; `crash` fails its first write after the bucket insert. */
function aggregator(tenant: string, crash: boolean): WriteStage {
  const meters: MeterDefinition[] = [
    { id: `${tenant}-sum`, tenant_id: tenant, environment_id: 'env', event_name: 'call', filters: [], aggregation: { type: 'SUM', field: 'n' } },
    { id: `${tenant}-count`, tenant_id: tenant, environment_id: 'env', event_name: 'call', filters: [], aggregation: { type: 'COUNT' } },
  ]
  let crashed = !crash
  return new WriteStage(ch(), new ActiveMeters(ch(), new MeterCache({ version: async () => 'v1', load: async () => meters }, 0), () => {}), {
    hooks: {
      afterBuckets: () => {
        if (crashed) return
        crashed = true
        throw new Error('killed after the bucket insert')
      },
    },
  })
}

const piece = (stream: string, first: number, records: IngestBatch[]): Piece => ({
  stream, first: BigInt(first), last: BigInt(first + records.length - 1),
  records: records.map((batch, i) => ({ offset: BigInt(first + i), batch })),
})

async function assertCountedOnce(tenant: string, all: IngestBatch[]): Promise<void> {
  const events = all.flatMap((b) => b.events)
  const want = events.reduce((s, e) => s.plus(JSON.parse(e.properties).n), new Decimal(0))
  const base = { tenantId: tenant, environmentId: 'env', start: new Date(OCT_31 - 60_000), end: new Date(OCT_31 + 86_400_000) }
  const [sum] = await queryMeterUsage(ch(), { ...base, meterId: `${tenant}-sum`, aggregation: 'SUM' })
  const [count] = await queryMeterUsage(ch(), { ...base, meterId: `${tenant}-count`, aggregation: 'COUNT' })
  assert.equal(sum.value, want.toString(), 'SUM over the buckets')
  assert.equal(count.value, String(events.length), 'COUNT over the buckets')
}

test('a replay at other offsets, in another grouping, after a crash between buckets and keys counts once', async () => {
  const tenant = 'ws-regroup'
  const all = batches(tenant, 4, 20)
  await assert.rejects(aggregator(tenant, true).add(piece('g/events/0', 0, all)), /killed/)
  // The broker lost its topic: the spool sends the records again, split over two partitions.
  const replay = aggregator(tenant, false)
  await Promise.all([replay.add(piece('g/events/1', 0, all.slice(0, 2))), replay.add(piece('g/events/2', 0, all.slice(2)))])
  await assertCountedOnce(tenant, all)
})

test('a shorter replay that crashes again, then the full replay elsewhere, counts once', async () => {
  const tenant = 'ws-double'
  const all = batches(tenant, 4, 20)
  await assert.rejects(aggregator(tenant, true).add(piece('g/events/0', 10, all)), /killed/)
  // The replay fetches fewer records than crashed, and is itself killed after its bucket insert.
  await assert.rejects(aggregator(tenant, true).add(piece('g/events/0', 10, all.slice(0, 1))), /killed/)
  const last = aggregator(tenant, false)
  await last.add(piece('g/events/3', 0, [all[3], all[0], all[2], all[1]]))
  await assertCountedOnce(tenant, all)
})

test('records never written before are counted in full next to replayed ones', async () => {
  const tenant = 'ws-mixed'
  const all = batches(tenant, 6, 10)
  await assert.rejects(aggregator(tenant, true).add(piece('g/events/0', 0, all.slice(0, 3))), /killed/)
  await aggregator(tenant, false).add(piece('g/events/5', 40, all))
  await assertCountedOnce(tenant, all)
})

test('ledger entries: records by content with their write times; the earlier format vouches by offset', () => {
  const entry = { writtenUs: 1_795_000_000_000_000n, records: new Map([['batch_1|e1|3', 1_794_999_999_000_000n], ['b|x|1', 1_795_000_000_000_000n]]) }
  assert.deepEqual(parseLedger(formatLedger(entry)), entry)
  assert.deepEqual(parseLedger('01795000000000000|7|9|batch_old'), { writtenUs: 1_795_000_000_000_000n, records: new Map(), offsets: { first: 7n, last: 9n } })
  assert.equal(recordFingerprint({ batch_id: 'batch_1', events: [{ event_id: 'e1' }, { event_id: 'e2' }] }), 'batch_1|e1|2')
})
