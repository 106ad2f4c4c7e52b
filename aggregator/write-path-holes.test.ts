// Side effects that land after their writer lost the shard, or while their caller believes they
// failed. Each case counted twice (or lost events) on the write path before its fix: the figures
// in the test names. Faults of a remote ClickHouse come from the fault transport around chDB.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { FaultTransport, type Fault } from '../clickhouse/fault-transport.js'
import { useChdb } from '../test/support/chdb.js'
import { testConfig } from '../test/support/platform.js'
import { ALL_SHARDS as ALL, meterSource as source, writeFixtures } from '../test/support/write-fixtures.js'
import { aggregatorShardLoadFailures } from '../platform/metrics.js'
import { ShardFence } from './shard-fence.js'
import { settleBackfills } from './writer.js'

const ch = useChdb('write-holes')
const T0 = Date.parse('2026-10-31T23:59:00Z')
const { fixture, writer, events, piece, usage } = writeFixtures(ch, T0, 'holes')
/** a hot window that reaches back past T0: a takeover loads every key of these tests */
const EVERYTHING = 10 * 365 * 24 * 60

/** The test's engine through a fault transport. */
function faulty() {
  let transport!: FaultTransport
  const through = ch().through((inner) => (transport = new FaultTransport(inner)))
  return { ch: through, faults: transport }
}

const bucketFaults: Fault[] = ['reset-before', 'reset-after-commit', 'timeout-while-completing']
for (const fault of bucketFaults) {
  test(`a bucket insert that fails (${fault}): the writer's own replay counts once (reset-after-commit was 20 for 10)`, async () => {
    const { tenant, sum, cnt } = fixture()
    const meters = source([sum, cnt])
    const { ch: through, faults } = faulty()
    faults.inject({ op: 'insert', match: /meter_buckets/, fault, delayMs: 300 })
    const a = await writer(meters, ALL, { ch: through })
    const evs = events(`own-${fault}`, 10)
    await assert.rejects(a.stage.add(piece(tenant, 'original', evs)))
    assert.deepEqual(faults.fired.map((f) => f.fault), [fault])
    await a.stage.add(piece(tenant, 'replay', evs))
    await sleep(500) // a statement that completes late has landed by now
    assert.equal(await usage(tenant, cnt), '10')
    assert.equal(await usage(tenant, sum), '55')
    const b = await writer(meters, ALL) // and a later owner loads what was counted
    await b.stage.add(piece(tenant, 'replay-2', evs))
    assert.equal(await usage(tenant, cnt), '10')
  })
}

test('a bucket insert whose client timed out while the server completes it: a new owner taking over at once counts once (was 20 for 10)', async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  const { ch: through, faults } = faulty()
  faults.inject({ op: 'insert', match: /meter_buckets/, fault: 'timeout-while-completing', delayMs: 400 })
  const a = await writer(meters, ALL, { ch: through })
  const evs = events('late-landing', 10)
  await assert.rejects(a.stage.add(piece(tenant, 'original', evs)), /Timeout/)
  const b = await writer(meters, ALL) // the group moved the partitions the moment A failed
  await b.stage.add(piece(tenant, 'replay', evs))
  await sleep(600)
  assert.equal(await usage(tenant, cnt), '10')
})

test("a write that outlasts its fence session's idle-in-transaction timeout keeps its shards: the taker waits for it (was 24 for 12)", async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  // The writer's pool ends a transaction left idle for a second, as PG_IDLE_IN_TRANSACTION_TIMEOUT_MS does after 60 s.
  const pool = ShardFence.pool(testConfig().databaseUrl, 4, { idleInTransactionTimeoutMs: 1000 })
  let paused = false
  const a = await writer(meters, ALL, {
    pg: pool,
    hooks: { afterFence: async () => { if (!paused) { paused = true; await sleep(2500) } } }, // a pause, a GC, a slow insert
  })
  await a.stage.tick()
  const evs = events('outlasts', 12)
  const slow = a.stage.add(piece(tenant, 'slow', evs)).then(() => 'written', (err: Error) => err.message)
  await sleep(1500) // past the session's timeout
  const b = await writer(meters, ALL)
  await b.stage.tick()
  await b.stage.add(piece(tenant, 'retry', evs))
  await slow
  assert.equal(await usage(tenant, cnt), '12')
  await pool.end()
})

test("a meter created while a shard's last write is in doubt counts that write's events (was 0 for 55)", async () => {
  const { tenant, sum, cnt } = fixture()
  const view = source([cnt])
  let fail = true
  const a = await writer(view, ALL, { hooks: { afterBuckets: () => { if (fail) { fail = false; throw new Error('keys insert failed') } } } })
  await a.stage.tick()
  const evs = events('doubt-cut', 10)
  await assert.rejects(a.stage.add(piece(tenant, 'x', evs)), /keys insert failed/)
  view.set([cnt, sum])
  await a.stage.tick() // cuts for the new meter, while the shards' last write is in doubt
  await settleBackfills(a, [sum.id])
  await a.stage.add(piece(tenant, 'replay', evs))
  assert.equal(await usage(tenant, cnt), '10')
  assert.equal(await usage(tenant, sum), '55')
})

test("a backfill attempt that fails before it deleted an earlier attempt's rows leaves none of them behind (was 315 for 276)", async () => {
  const { tenant, sum } = fixture()
  const view = source([])
  const { ch: through, faults } = faulty()
  let died = false
  const a = await writer(view, ALL, {
    ch: through,
    hooks: { backfillPageSize: 5, afterBackfillPage: () => { if (!died) { died = true; throw new Error('holder died') } } },
  })
  await a.stage.tick()
  await a.stage.add(piece(tenant, 'old', events('bf-left', 23)))
  // The second attempt cannot delete the first one's page.
  faults.inject({ op: 'command', match: /DELETE/, fault: 'reset-before' })
  view.set([sum])
  await a.stage.tick()
  await settleBackfills(a, [sum.id])
  assert.equal(faults.fired.length, 1)
  assert.equal(await usage(tenant, sum), '276')
})

test("a backfill page whose insert completes after its client timed out is deleted by the next attempt, not left beside it (was 315 for 276)", async () => {
  const { tenant, sum } = fixture()
  const view = source([])
  const { ch: through, faults } = faulty()
  const a = await writer(view, ALL, { ch: through, hooks: { backfillPageSize: 5 } })
  await a.stage.tick()
  await a.stage.add(piece(tenant, 'old', events('bf-late', 23)))
  // The first page's bucket rows land 1.5 s after their client gave up: after the next attempt started.
  faults.inject({ op: 'insert', match: /meter_buckets/, fault: 'timeout-while-completing', delayMs: 1500 })
  view.set([sum])
  await a.stage.tick()
  await settleBackfills(a, [sum.id])
  await sleep(1700)
  assert.equal(faults.fired.length, 1)
  assert.equal(await usage(tenant, sum), '276')
})

test('a takeover reads a shard in pages: 300 keys in pages of 7, every copy then a duplicate', async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  const a = await writer(meters, ALL)
  const evs = events('paged', 300)
  await a.stage.add(piece(tenant, 'first', evs))
  const { ch: through, faults } = faulty()
  const b = await writer(meters, ALL, { ch: through, keyPageSize: 7, hotWindowMinutes: EVERYTHING })
  assert.equal(faults.fired.length, 0)
  await b.stage.tick()
  assert.equal([...b.shards.owned.values()].reduce((n, s) => n + s.keys.size, 0) >= 300, true, 'the hot window holds every key')
  const result = await b.stage.add(piece(tenant, 'again', evs))
  assert.equal(result.duplicates, 300)
  assert.ok(faults.fired.length === 0)
  assert.equal(await usage(tenant, cnt), '300')
})

for (const fault of ['truncate', 'truncate-at-line', 'error-mid-stream'] as const) {
  test(`a takeover whose key stream arrives cut short or corrupt (${fault}) holds no shard, says why, and the retry counts nothing twice`, async () => {
    const { tenant, cnt } = fixture()
    const meters = source([cnt])
    const a = await writer(meters, ALL)
    const evs = events(`stream-${fault}`, 400)
    await a.stage.add(piece(tenant, 'first', evs))
    const { ch: through, faults } = faulty()
    const logs: string[] = []
    const b = await writer(meters, ALL, { ch: through, log: (m) => logs.push(m), hotWindowMinutes: EVERYTHING })
    const failuresBefore = await loadFailures(fault === 'error-mid-stream' ? 'corrupt' : 'truncated')
    // The first shard's key stream (it holds keys of every test in this file).
    faults.inject({ op: 'queryText', match: /dedup_events/, fault })
    await assert.rejects(b.stage.add(piece(tenant, 'again', evs)), /dedup keys of shard \d+ arrived (cut short|corrupt)/)
    assert.equal(b.shards.owned.size, 0)
    assert.ok(logs.some((l) => /its dedup keys could not be loaded/.test(l)), logs.join('\n'))
    assert.equal(await loadFailures(fault === 'error-mid-stream' ? 'corrupt' : 'truncated'), failuresBefore + 1)
    faults.clear()
    const result = await b.stage.add(piece(tenant, 'again', evs))
    assert.equal(result.duplicates, 400)
    assert.equal(await usage(tenant, cnt), '400')
  })
}

async function loadFailures(reason: string): Promise<number> {
  const metric = await aggregatorShardLoadFailures.get()
  return metric.values.find((v) => v.labels.reason === reason)?.value ?? 0
}
