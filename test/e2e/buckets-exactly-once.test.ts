// Exactly-once with pre-aggregated buckets, through ingest, the Kafka-protocol broker and chDB:
// an aggregator that dies after its bucket insert and before it records the event keys, and a
// client that re-sends an event_id days later in another batch (also across a restart).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { auditMeters } from '../../aggregator/usage-audit.js'
import { postgresMeterSource } from '../../billing-api/meters/meter-definitions.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { created, ingestAll, usage } from '../support/fixtures.js'
import { groupAggregator } from '../support/group-aggregator.js'

let p: TestPlatform
let failAfterBuckets = 0
let failBackfillPages = 0

before(async () => {
  p = await startTestPlatform({
    aggregatorHooks: {
      afterBuckets: () => {
        if (failAfterBuckets > 0) {
          failAfterBuckets--
          throw new Error('simulated crash after the bucket insert, before the event keys')
        }
      },
      afterBackfillPage: () => {
        if (failBackfillPages > 0) {
          failBackfillPages--
          throw new Error('simulated ClickHouse failure after a backfill page was written')
        }
      },
    },
  })
})
after(async () => {
  await p?.stop()
})

const ev = (id: string, n: number, timestamp = '2026-10-15T12:00:30Z', customer = 'c1') => ({
  event_id: id, event_name: 'calls', external_customer_id: customer, timestamp, properties: { n, user: `u${n % 7}` },
})

/** The usage:verify audit over a tenant's meters: buckets equal a raw recount, meter by meter. */
async function assertAudit(tenantId: string) {
  const meters = (await postgresMeterSource(p.ctx.orm).load()).filter((m) => m.tenant_id === tenantId)
  const audits = await auditMeters(p.ctx.ch, meters, new Date('2000-01-01T00:00:00Z'), new Date('2100-01-01T00:00:00Z'))
  assert.ok(audits.length > 0)
  for (const a of audits) assert.ok(a.same, `${a.meter.id}: raw ${JSON.stringify(a.raw)} != buckets ${JSON.stringify(a.buckets)}`)
}

async function settled(api: any, meterId: string, count: number, body: Record<string, unknown> = {}) {
  return eventually(async () => {
    const u = await usage(api, meterId, body)
    return u.event_count === count ? u : undefined
  }, `${count} events counted`)
}

test('killed after the bucket insert and before the event keys: the replay counts nothing twice', async () => {
  const { api, tenantId } = await p.newTenant()
  const sum = await created(api.post('/v1/meters', { name: 's', event_name: 'calls', aggregation: { type: 'SUM', field: 'n' } }))
  const uniq = await created(api.post('/v1/meters', { name: 'u', event_name: 'calls', aggregation: { type: 'COUNT_UNIQUE', field: 'user' } }))
  const expr = await created(api.post('/v1/meters', { name: 'x', event_name: 'calls', aggregation: { type: 'SUM', expression: 'n * 2 + 1' } }))
  const weighted = await created(api.post('/v1/meters', { name: 'w', event_name: 'calls', aggregation: { type: 'WEIGHTED_SUM', field: 'n' } }))
  await ingestAll(api, Array.from({ length: 500 }, (_, i) => ev(`pre-${i}`, 1)))
  assert.equal((await settled(api, sum.id, 500)).value, '500')

  // Twice in a row: the first write fails after its buckets landed, and so does the first replay.
  failAfterBuckets = 2
  const committedBefore = p.aggregator!.stats.events
  // Events in two months, so the bucket insert is two parts, each with its own ledger row.
  await ingestAll(api, [
    ...Array.from({ length: 300 }, (_, i) => ev(`mid-${i}`, 2)),
    ...Array.from({ length: 200 }, (_, i) => ev(`nov-${i}`, 3, '2026-11-02T08:15:45.250Z')),
  ])
  // The buckets are visible after the first attempt already; wait for the replays to commit.
  await eventually(async () => (failAfterBuckets === 0 && p.aggregator!.stats.events - committedBefore >= 500 ? true : undefined), 'the replays to commit')
  const u = await settled(api, sum.id, 1000)
  assert.equal(u.value, String(500 + 600 + 600))
  // Over a range that starts and ends mid-minute: whole buckets plus the edge rows.
  const mid = await usage(api, sum.id, { start_time: '2026-10-15T12:00:30Z', end_time: '2026-11-02T08:15:45.251Z' })
  assert.deepEqual([mid.value, mid.event_count], ['1700', 1000])
  assert.equal((await usage(api, uniq.id, {})).value, '3', 'u1, u2, u3')
  // n * 2 + 1: 500 x 3 + 300 x 5 + 200 x 7 = 4400, each event once
  assert.equal((await settled(api, expr.id, 1000)).value, '4400')
  // The 800 October events share one instant; the last by event_id (pre-99, n = 1) holds until
  // the November events (n = 3), 1 ms before the end: (1 x (L - 1) + 3 x 1) / L with
  // L = 1 541 715 251 ms = 1.000000001297 (12 decimals); replays added no point twice.
  const w = await usage(api, weighted.id, { start_time: '2026-10-15T12:00:30Z', end_time: '2026-11-02T08:15:45.251Z' })
  assert.deepEqual([w.value, w.event_count], ['1.000000001297', 1000])
  await assertAudit(tenantId)
})

test('a backfill that fails after writing rows is retried, its partial rows removed first: nothing lost, nothing twice', async () => {
  const { api, tenantId } = await p.newTenant()
  await ingestAll(api, Array.from({ length: 300 }, (_, i) => ({ ...ev(`late-${i}`, 2), event_name: 'late' })))
  // Counted (raw rows and their dedup keys written) before the meter exists: only its backfill can count them.
  await eventually(async () => {
    const [row] = await p.ctx.ch.query<{ n: string }>(`SELECT toString(count()) AS n FROM (SELECT DISTINCT event_id FROM ${p.ctx.ch.table('events_raw')} WHERE tenant_id = '${tenantId}')`)
    return row.n === '300' ? true : undefined
  }, 'the events to be written before the meter exists')
  await p.aggregator!.stage.drain()
  failBackfillPages = 1
  const m = await created(api.post('/v1/meters', { name: 'late', event_name: 'late', aggregation: { type: 'SUM', field: 'n' } }))
  // The first attempt wrote its page, then failed; the retry (after 1 s) starts from a clean meter.
  const u = await settled(api, m.id, 300)
  assert.equal(failBackfillPages, 0, 'the first backfill attempt failed')
  assert.equal(u.value, '600')
  const mid = await usage(api, m.id, { start_time: '2026-10-15T12:00:10Z', end_time: '2026-10-15T12:00:40Z' })
  assert.deepEqual([mid.value, mid.event_count], ['600', 300], 'the edge rows were rebuilt once too')
  // Live from now on: a later event counts once.
  await ingestAll(api, [{ ...ev('late-after', 5), event_name: 'late' }])
  assert.equal((await settled(api, m.id, 301)).value, '605')
  await assertAudit(tenantId)
})

test('an event re-sent days later (its id and timestamp), in another batch and after an aggregator restart, counts once; its id with another timestamp is another event', async () => {
  const { api } = await p.newTenant()
  const sum = await created(api.post('/v1/meters', { name: 's', event_name: 'calls', aggregation: { type: 'SUM', field: 'n' } }))
  const latest = await created(api.post('/v1/meters', { name: 'l', event_name: 'calls', aggregation: { type: 'LATEST', field: 'n' } }))
  await ingestAll(api, [ev('order-1', 10, '2026-10-01T09:00:00Z'), ev('order-2', 20, '2026-10-01T09:00:00Z')])
  assert.equal((await settled(api, sum.id, 2)).value, '30')

  // The aggregator restarts: the dedup store lives in ClickHouse, not in the process.
  await p.aggregator!.stop()
  const restarted = await groupAggregator(p, 'aggregator-after-restart')
  try {
    // 40 days later the client re-sends order-1 (its timestamp, another value), next to a new event.
    await ingestAll(api, [ev('order-1', 999, '2026-10-01T09:00:00Z'), ev('order-3', 5, '2026-11-10T09:00:00Z')])
    const u = await settled(api, sum.id, 3)
    assert.equal(u.value, '35')
    assert.equal((await usage(api, latest.id, {})).value, '5', 'the resend is not the latest value either')
    assert.equal((await usage(api, sum.id, { start_time: '2026-11-01T00:00:00Z', end_time: '2026-12-01T00:00:00Z' })).event_count, 1)
    assert.ok(restarted.stats.duplicates >= 1)
    // An event is its (event_id, timestamp): the same id at another time is a new event.
    await ingestAll(api, [ev('order-2', 7, '2026-11-10T10:00:00Z')])
    assert.equal((await settled(api, sum.id, 4)).value, '42')
  } finally {
    await restarted.stop()
  }
})
