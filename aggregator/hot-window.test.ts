// Dedup keys in memory for a hot window only: an event is its (event_id, timestamp); one newer
// than the window is decided by the writer's memory, an older one by memory and then
// dedup_events (one lookup per write). Copies of old events are recognised after eviction, a
// restart and a takeover; memory follows the window, not the history.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { storedKeyOf } from '../clickhouse/queries/dedup-keys.js'
import { useChdb } from '../test/support/chdb.js'
import { ALL_SHARDS as ALL, meterSource as source, writeFixtures } from '../test/support/write-fixtures.js'
import type { Piece } from './write-stage.js'
import type { Writer } from './writer.js'

const ch = useChdb('hot-window')
const MIN = 60_000
const NOW = Date.now()
const old = writeFixtures(ch, NOW - 3 * 86_400_000, 'hw-old')
const recent = writeFixtures(ch, NOW - 2 * MIN, 'hw-recent')

/** Writes with no events until every shard had its turn to evict (8 shards a write). */
async function evictAll(w: Writer, piece: (tenant: string, batchId: string, evs: []) => Piece, tenant: string): Promise<void> {
  for (let i = 0; i < 8; i++) await w.stage.add(piece(tenant, `evict-${i}`, []))
}

/** A clock the test steps. */
function steppedClock() {
  let offset = 0
  return { now: () => Date.now() + offset, step: (ms: number) => (offset += ms) }
}

const memoryHolds = (w: Writer, tenant: string, e: { event_id: string; timestamp: number }) => {
  const k = storedKeyOf(tenant, 'env', e.event_id, e.timestamp)
  return w.shards.owned.get(k.shard)?.keys.has(k.d) ?? false
}

test('an event days old counts once; its copy (id and timestamp) is a duplicate in memory, after eviction, after a restart and after a takeover; its id at another time is a new event', async () => {
  const { tenant, sum, cnt } = old.fixture()
  const meters = source([sum, cnt])
  const clock = steppedClock()
  const a = await old.writer(meters, ALL, { hotWindowMinutes: 10, clock: clock.now })
  const evs = old.events('aged', 20)
  const first = await a.stage.add(old.piece(tenant, 'first', evs))
  assert.deepEqual([first.duplicates, first.cold], [0, 20], 'checked in the store, not found')
  const again = await a.stage.add(old.piece(tenant, 'again', evs))
  assert.equal(again.duplicates, 20)
  assert.equal(memoryHolds(a, tenant, evs[0]), true, 'kept until the next eviction')

  clock.step(2 * MIN) // the window moves on: the next writes evict what is older
  await evictAll(a, old.piece, tenant)
  const afterEviction = await a.stage.add(old.piece(tenant, 'after-eviction', evs))
  assert.deepEqual([afterEviction.duplicates, afterEviction.cold], [20, 20])
  assert.equal(evs.some((e) => memoryHolds(a, tenant, e)), false, 'memory no longer holds them')

  const b = await old.writer(meters, ALL, { hotWindowMinutes: 10 }) // a restart: another writer takes every shard
  const afterTakeover = await b.stage.add(old.piece(tenant, 'after-takeover', evs))
  assert.equal(afterTakeover.duplicates, 20)
  assert.equal(evs.some((e) => memoryHolds(b, tenant, e)), false, 'a takeover does not load keys older than the window')

  const moved = evs.map((e) => ({ ...e, timestamp: e.timestamp + 1 }))
  const other = await b.stage.add(old.piece(tenant, 'other-time', moved))
  assert.equal(other.duplicates, 0, 'the same ids at other times are other events')
  assert.equal(await old.usage(tenant, cnt), '40')
  assert.equal(await old.usage(tenant, sum), String(2 * 210))
})

test('recent events are decided by memory: a takeover loads the hot window (events in the future too) and none of the older keys', async () => {
  const { tenant, cnt } = recent.fixture()
  const meters = source([cnt])
  const a = await recent.writer(meters, ALL, { hotWindowMinutes: 10 })
  const hot = recent.events('hot', 40) // from 2 minutes ago to 2.5 minutes ahead
  const aged = old.events(`aged-${tenant}`, 10).map((e) => ({ ...e, event_name: 'call' }))
  await a.stage.add(recent.piece(tenant, 'hot', [...hot, ...aged]))
  const b = await recent.writer(meters, ALL, { hotWindowMinutes: 10 })
  await b.stage.tick()
  assert.equal(hot.every((e) => memoryHolds(b, tenant, e)), true, 'every key of the window is in memory')
  assert.equal(aged.some((e) => memoryHolds(b, tenant, e)), false, 'no key older than the window is')
  const copy = await b.stage.add(recent.piece(tenant, 'copy', hot))
  assert.deepEqual([copy.duplicates, copy.cold ?? 0], [40, 0], 'no lookup for a recent event')
  const agedCopy = await b.stage.add(recent.piece(tenant, 'aged-copy', aged))
  assert.deepEqual([agedCopy.duplicates, agedCopy.cold], [10, 10])
  assert.equal(await recent.usage(tenant, cnt), '40')
})

test('the window never moves back when the clock steps back, and eviction never runs ahead of it', async () => {
  const { tenant, cnt } = recent.fixture()
  const meters = source([cnt])
  const clock = steppedClock()
  const a = await recent.writer(meters, ALL, { hotWindowMinutes: 10, clock: clock.now })
  const evs = recent.events('steps', 10)
  await a.stage.add(recent.piece(tenant, 'first', evs))
  clock.step(20 * MIN)
  await a.stage.add(recent.piece(tenant, 'evicting', recent.events('steps-other', 1)))
  await evictAll(a, recent.piece, tenant)
  assert.equal(evs.some((e) => memoryHolds(a, tenant, e)), false, 'older than the window: evicted')
  const start = a.shards.hotFrom()
  clock.step(-60 * MIN) // the clock steps back an hour
  assert.equal(a.shards.hotFrom(), start, 'the boundary stays where it was')
  const copy = await a.stage.add(recent.piece(tenant, 'copy', evs))
  assert.deepEqual([copy.duplicates, copy.cold], [10, 10], 'still older than the window: checked in the store')
  assert.equal(await recent.usage(tenant, cnt), '11')
})

test('a write of 25,000 events older than the window looks them up in statements of 20,000 keys (each over 256 KiB of text); their copies are all duplicates', async () => {
  const { tenant, cnt } = old.fixture()
  const meters = source([cnt])
  const a = await old.writer(meters, ALL, { hotWindowMinutes: 10 })
  const evs = old.events('bulk-old', 25_000).map((e, i) => ({ ...e, timestamp: e.timestamp - (i % 1000) * 86_400 }))
  const first = await a.stage.add(old.piece(tenant, 'bulk', evs))
  assert.deepEqual([first.duplicates, first.cold], [0, 25_000])
  const copy = await a.stage.add(old.piece(tenant, 'bulk-copy', evs))
  assert.equal(copy.duplicates, 25_000)
  const b = await old.writer(meters, ALL, { hotWindowMinutes: 10 })
  const afterTakeover = await b.stage.add(old.piece(tenant, 'bulk-copy-2', evs))
  assert.deepEqual([afterTakeover.duplicates, afterTakeover.cold], [25_000, 25_000])
})

test('an event sent without a timestamp is its id: a resend (stamped anew on arrival) is a duplicate in memory, after a restart, and when both arrive late', async () => {
  const { tenant, cnt } = recent.fixture()
  const meters = source([cnt])
  const clock = steppedClock()
  const a = await recent.writer(meters, ALL, { hotWindowMinutes: 10, clock: clock.now })
  const evs = recent.events('unstamped', 30)
  const arrival = NOW - 2 * MIN
  const first = await a.stage.add(recent.stampedPiece(tenant, 'first', evs, arrival))
  assert.equal(first.duplicates, 0)
  const resent = await a.stage.add(recent.stampedPiece(tenant, 'resent', evs, arrival + 5_000))
  assert.equal(resent.duplicates, 30, 'the resend, stamped 5 s later, is the same event')
  const b = await recent.writer(meters, ALL, { hotWindowMinutes: 10, clock: clock.now }) // a restart
  const afterRestart = await b.stage.add(recent.stampedPiece(tenant, 'after-restart', evs, arrival + 9_000))
  assert.equal(afterRestart.duplicates, 30, 'a takeover loads them with the window')

  // The aggregator lags: both copies reach it after their arrival left the window.
  const late = recent.events('unstamped-late', 30)
  const lateArrival = NOW - 3 * 86_400_000
  const lateFirst = await b.stage.add(recent.stampedPiece(tenant, 'late-first', late, lateArrival))
  assert.equal(lateFirst.duplicates, 0)
  clock.step(2 * MIN) // the window moves on: the next writes evict what is older
  await evictAll(b, recent.piece, tenant)
  const lateResent = await b.stage.add(recent.stampedPiece(tenant, 'late-resent', late, lateArrival + 5_000))
  assert.equal(lateResent.duplicates, 30, 'kept in memory for the window after it was counted')
  assert.equal(await recent.usage(tenant, cnt), '30')
})
