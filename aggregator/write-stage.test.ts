// The write path with several writers on one database (no Kafka): each case failed on the
// single-writer design it replaces (figures in the test names), and passes now. Writers are
// fed directly, each holding the shards the group would give it; Postgres holds the fence.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { SHARDS, eventShard } from '../schemas/shards.js'
import { useChdb } from '../test/support/chdb.js'
import { ALL_SHARDS as ALL, meterSource as source, writeFixtures } from '../test/support/write-fixtures.js'
import { FencedError } from './shard-fence.js'
import { settleBackfills } from './writer.js'
import { queryMeterUsage } from '../clickhouse/queries/meter-usage.js'

const ch = useChdb('write-stage')
const T0 = Date.parse('2026-10-31T23:59:00Z') // events span two month parts
const { fixture, writer, events, piece, inShards, usage } = writeFixtures(ch, T0, 'ws')

const LOW = ALL.filter((s) => s < SHARDS / 2)
const HIGH = ALL.filter((s) => s >= SHARDS / 2)

test('a writer that sees a new meter after another writer counted its events does not count them again (was 10 for 5)', async () => {
  const { tenant, sum } = fixture()
  const fast = source([sum])
  const slow = source([])
  const a = await writer(fast, LOW)
  const b = await writer(slow, HIGH)
  const evs = inShards(tenant, LOW, events('late-view', 40)).slice(0, 5)
  assert.equal(evs.length, 5)
  await a.stage.add(piece(tenant, 'b1', evs))
  slow.set([sum])
  await Promise.all([settleBackfills(a, [sum.id]), settleBackfills(b, [sum.id])])
  assert.equal(await usage(tenant, sum), String(evs.reduce((s, e) => s + (JSON.parse(e.properties) as { n: number }).n, 0)))
})

test('a meter created after its events, with two writers, is backfilled once (was 8 for 4)', async () => {
  const { tenant, cnt } = fixture()
  const viewA = source([])
  const viewB = source([])
  const a = await writer(viewA, LOW)
  const b = await writer(viewB, HIGH)
  const all = events('before-meter', 40)
  const low = inShards(tenant, LOW, all).slice(0, 2)
  const high = inShards(tenant, HIGH, all).slice(0, 2)
  await Promise.all([a.stage.add(piece(tenant, 'b1', low)), b.stage.add(piece(tenant, 'b2', high))])
  assert.equal(await usage(tenant, cnt), '0')
  viewA.set([cnt])
  viewB.set([cnt])
  await Promise.all([settleBackfills(a, [cnt.id]), settleBackfills(b, [cnt.id])])
  assert.equal(await usage(tenant, cnt), '4')
  // and the live path goes on counting it, once
  await Promise.all([a.stage.add(piece(tenant, 'b3', inShards(tenant, LOW, all).slice(2, 4))), b.stage.add(piece(tenant, 'b4', high))])
  assert.equal(await usage(tenant, cnt), '6')
})

test('the same event ids in two records written by two writers at once count once (was 4 for 2)', async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  let reroutes = 0
  const a = await writer(meters, LOW)
  // B holds the other shards: what it receives of A's shards goes on to A (the partition of its shard).
  const b = await writer(meters, HIGH, { reroute: async (batch) => { reroutes++; await a.stage.add(piece(tenant, batch.batch_id, batch.events)) } })
  const evs = inShards(tenant, LOW, events('twice', 20)).slice(0, 2)
  await Promise.all([a.stage.add(piece(tenant, 'first', evs)), b.stage.add(piece(tenant, 'copy', evs))])
  assert.equal(reroutes, 1)
  assert.equal(await usage(tenant, cnt), '2')
})

test('two writers given the same shards: the later one fences the earlier out, and the count stays exact', async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  const a = await writer(meters, ALL)
  await a.stage.tick() // takes its shards as soon as they are assigned
  const evs = events('fenced', 30)
  await a.stage.add(piece(tenant, 'p1', evs.slice(0, 10)))
  const b = await writer(meters, ALL) // a rebalance gave every partition to B; A has not noticed yet
  await b.stage.tick()
  await b.stage.add(piece(tenant, 'p2', evs.slice(0, 20)))
  await assert.rejects(a.stage.add(piece(tenant, 'p3', evs)), (err) => err instanceof FencedError)
  await b.stage.add(piece(tenant, 'p3', evs))
  assert.equal(await usage(tenant, cnt), '30')
})

test('a writer fenced out by a stale claim takes its assigned shards back when no rebalance follows (the partition stalled for good: processes topology at 20,000/s)', async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  let now = T0
  const a = await writer(meters, ALL, { partitions: 4, clock: () => now })
  await a.stage.tick()
  const evs = inShards(tenant, ALL.filter((s) => s % 4 === 0), events('stale-claim', 120))
  const of = (batchId: string, part: typeof evs) => ({ ...piece(tenant, batchId, part), partition: 0 })
  await a.stage.add(of('s1', evs.slice(0, 10)))
  // B claims the shards for an assignment the group has already replaced (its claim landed late),
  // and is told at once that it holds none of them: nobody else will write them.
  const b = await writer(meters, ALL, { partitions: 4 })
  await b.stage.tick()
  b.shards.assign([])
  await assert.rejects(a.stage.add(of('s2', evs)), (err) => err instanceof FencedError)
  // No rebalance comes: A is still the group's choice. Within the group's session it waits (it
  // may be the stale one); after that it takes the shards back.
  await a.stage.tick()
  assert.equal((await a.stage.add(of('s2', evs))).takenOver, evs.length, 'within the session: left to the other writer')
  now += 30_000
  await a.stage.tick()
  await a.stage.add(of('s2', evs))
  assert.equal(await usage(tenant, cnt), String(evs.length))
})

test('a writer fenced out leaves the events of the taken shards to their new owner: not counted, not sent on, its piece not to be committed', async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  let reroutes = 0
  const a = await writer(meters, ALL, { partitions: 4, reroute: async () => void reroutes++ })
  await a.stage.tick()
  const b = await writer(meters, ALL, { partitions: 4 }) // the group gave everything to B; A has not noticed
  await b.stage.tick()
  const evs = events('taken', 40)
  await assert.rejects(a.stage.add(piece(tenant, 'z1', evs)), (err) => err instanceof FencedError)
  // A's replay of the same partition: its events' shards are read by B from this partition.
  const shard = eventShard(tenant, 'env', evs[0].event_id)
  const fromPartition = { ...piece(tenant, 'z1', inShards(tenant, ALL.filter((s) => s % 4 === shard % 4), evs)), partition: shard % 4 }
  const result = await a.stage.add(fromPartition)
  assert.equal(result.takenOver, fromPartition.records[0].batch.events.length)
  assert.equal(reroutes, 0, 'B reads them from the same partition: nothing is produced again')
  assert.equal(await usage(tenant, cnt), '0')
  await b.stage.add(fromPartition)
  assert.equal(await usage(tenant, cnt), String(fromPartition.records[0].batch.events.length))
})

test('a takeover that fails part-way (Postgres gone between two shards) holds none of them: the retry loads every key and counts nothing twice', async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  const a = await writer(meters, ALL)
  const evs = events('partial-claim', 200)
  await a.stage.add(piece(tenant, 'first', evs))
  assert.equal(await usage(tenant, cnt), '200')
  const b = await writer(meters, ALL) // the group moved every partition to B
  const markDone = b.shards.fence.markDone.bind(b.shards.fence)
  let calls = 0
  b.shards.fence.markDone = async (sql, done) => {
    // The third shard's takeover cannot finish: Postgres went away (the first two did).
    if (++calls === 3) throw new Error('connect ECONNREFUSED (injected)')
    return markDone(sql, done)
  }
  await assert.rejects(b.stage.add(piece(tenant, 'again', evs)), /ECONNREFUSED/)
  assert.equal(b.shards.owned.size, 0, 'no shard is held after a failed takeover')
  const result = await b.stage.add(piece(tenant, 'again', evs))
  assert.equal(result.duplicates, 200)
  assert.equal(await usage(tenant, cnt), '200')
})

test('a zombie writer paused inside its write holds its shards until it ends; the next owner sees what it wrote', async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  let release!: () => void
  const paused = new Promise<void>((r) => (release = r))
  let pausedOnce = false
  const a = await writer(meters, ALL, {
    hooks: { afterFence: async () => { if (!pausedOnce) { pausedOnce = true; await paused } } },
  })
  await a.stage.tick() // holds every shard now
  const evs = events('zombie', 12)
  const zombieWrite = a.stage.add(piece(tenant, 'z1', evs))
  await new Promise((r) => setTimeout(r, 200))
  const b = await writer(meters, ALL)
  let claimed = false
  const taking = b.stage.tick().then(() => (claimed = true))
  await new Promise((r) => setTimeout(r, 300))
  assert.equal(claimed, false, 'the taker waits for the write in flight')
  release()
  await zombieWrite
  await taking
  await b.stage.add(piece(tenant, 'retry', evs)) // a client retry under another batch id
  await assert.rejects(a.stage.add(piece(tenant, 'z2', events('zombie-late', 3))), (err) => err instanceof FencedError)
  assert.equal(await usage(tenant, cnt), '12')
})

for (const point of ['afterFence', 'afterBuckets', 'afterKeys'] as const) {
  test(`a crash ${point} then a replay under a new batch id, regrouped, on a new writer: counted once (afterBuckets was 4 for 2)`, async () => {
    const { tenant, sum, cnt } = fixture()
    const meters = source([sum, cnt])
    const a = await writer(meters, ALL, { hooks: { [point]: () => { throw new Error(`killed ${point}`) } } })
    const evs = events(`crash-${point}`, 50)
    await assert.rejects(a.stage.add(piece(tenant, 'original', evs)), /killed/)
    const b = await writer(meters, ALL) // the restarted process
    await b.stage.add(piece(tenant, 'retry-1', evs.slice(20)))
    await b.stage.add(piece(tenant, 'retry-2', evs.slice(0, 30)))
    assert.equal(await usage(tenant, cnt), '50')
    assert.equal(await usage(tenant, sum), String((50 * 51) / 2))
  })
}

test('a writer whose own write failed after its bucket block records those keys before it writes again', async () => {
  const { tenant, cnt } = fixture()
  const meters = source([cnt])
  let fail = true
  const a = await writer(meters, ALL, { hooks: { afterBuckets: () => { if (fail) { fail = false; throw new Error('keys insert failed') } } } })
  const evs = events('dirty', 8)
  await assert.rejects(a.stage.add(piece(tenant, 'x', evs)), /keys insert failed/)
  await a.stage.add(piece(tenant, 'y', evs))
  const b = await writer(meters, ALL) // and a later owner loads them from the store
  await b.stage.add(piece(tenant, 'z', evs))
  assert.equal(await usage(tenant, cnt), '8')
})

test('a backfill whose holder fails mid-way is redone by the next holder, deleting only its own rows beside live ones', async () => {
  const { tenant, sum } = fixture()
  const view = source([])
  let failOnce = true
  const a = await writer(view, ALL, {
    hooks: { backfillPageSize: 5, afterBackfillPage: () => { if (failOnce) { failOnce = false; throw new Error('holder died') } } },
  })
  await a.stage.tick()
  const before = events('bf-before', 23)
  await a.stage.add(piece(tenant, 'old', before))
  view.set([sum])
  await a.stage.tick() // cuts: the meter is live from here
  const live = events('bf-live', 7, () => 1000)
  await a.stage.add(piece(tenant, 'live', live))
  await settleBackfills(a, [sum.id])
  assert.equal(await usage(tenant, sum), String((23 * 24) / 2 + 7000))
})

test('a raw-row insert that fails leaves nothing counted; the replay counts once, and a later meter backfills every event', async () => {
  const { tenant, cnt, sum } = fixture()
  const meters = source([cnt])
  let fail = true
  const a = await writer(meters, ALL, { hooks: { besideInserts: () => { if (fail) { fail = false; throw new Error('events_raw insert failed') } } } })
  const evs = events('sibling', 9)
  await assert.rejects(a.stage.add(piece(tenant, 'x', evs)), /events_raw insert failed/)
  assert.equal(await usage(tenant, cnt), '0', 'no bucket block without the raw rows')
  await a.stage.add(piece(tenant, 'y', evs))
  const b = await writer(meters, ALL)
  await b.stage.add(piece(tenant, 'z', evs))
  assert.equal(await usage(tenant, cnt), '9')
  // Every counted event has its raw row: a meter created now backfills all nine.
  meters.set([cnt, sum])
  await settleBackfills(b, [sum.id])
  assert.equal(await usage(tenant, sum), '45')
})

test('a write whose events span more than 100 days is written and counted once (with no event-age limit; was TOO_MANY_PARTS for ever)', async () => {
  const { tenant, cnt } = fixture()
  const a = await writer(source([cnt]), ALL)
  const DAY = 86_400_000
  // one event a day over 150 days: 150 day partitions of dedup_events, 6 month partitions
  const evs = events('history', 150).map((e, i) => ({ ...e, timestamp: T0 - i * DAY }))
  await a.stage.add(piece(tenant, 'history', evs))
  const [row] = await queryMeterUsage(ch(), {
    tenantId: tenant, environmentId: 'env', meterId: cnt.id, aggregation: 'COUNT', start: new Date(T0 - 200 * DAY), end: new Date(T0 + DAY),
  })
  assert.equal(row?.value, '150')
  await a.stage.add(piece(tenant, 'history-again', evs))
  const [again] = await queryMeterUsage(ch(), {
    tenantId: tenant, environmentId: 'env', meterId: cnt.id, aggregation: 'COUNT', start: new Date(T0 - 200 * DAY), end: new Date(T0 + DAY),
  })
  assert.equal(again?.value, '150')
})
