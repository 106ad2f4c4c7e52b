// The spool on a real directory: group commit, replay of what is not yet safe, a torn tail,
// segment deletion and the disk bound.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { SpoolConfig } from '../../platform/config.js'
import { ServiceUnavailableError } from '../../platform/errors.js'
import { scanFrames } from './frame.js'
import { Spool } from './spool.js'

function config(over: Partial<SpoolConfig> = {}): SpoolConfig {
  return { enabled: true, dir: mkdtempSync(join(tmpdir(), 'spool-')), retainUntil: 'committed', maxBytes: 1 << 30, segmentBytes: 64 * 1024, memoryBytes: 1 << 20, resendAfterMs: 60_000, lingerMs: 0, ...over }
}
const rec = (key: string, size = 100, partition = 0) => ({ key: `${key}@${partition}`, tenantId: 't1', environmentId: 'e1', events: 3, value: Buffer.alloc(size, key) })
const segments = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.seg'))

test('concurrent appends share writes; a reopened spool replays exactly what is not yet safe', async () => {
  const c = config()
  const spool = await Spool.open(c)
  await Promise.all(Array.from({ length: 50 }, (_, i) => spool.append([rec(`k${i}`)])))
  const sent = spool.take(1 << 20, 1000)
  assert.equal(sent.length, 50)
  // Kafka placed them at offsets 100..149 of partition 0; the group committed up to 125.
  spool.forwarded(sent, spool.generation, sent.map((_, i) => [{ partition: 0, offset: BigInt(100 + i) }]))
  assert.equal(spool.committedOffsets(new Map([[0, 125n]]), spool.generation + 1), 0, 'offsets of another broker generation release nothing')
  assert.equal(spool.committedOffsets(new Map([[0, 125n]]), spool.generation), 25)
  assert.deepEqual(spool.left(), { batches: 25, events: 75, bytes: 2500 })
  await spool.close()

  const again = await Spool.open(c)
  assert.equal(again.replayedAtOpen, 25)
  const replay = again.take(1 << 20, 1000)
  assert.deepEqual(replay.map((e) => e.key), Array.from({ length: 25 }, (_, i) => `k${i + 25}@0`))
  assert.deepEqual(await again.valueOf(replay[0]), Buffer.alloc(100, 'k25'))
  await again.close()
  rmSync(c.dir, { recursive: true })
})

test('a torn frame at the end (never acknowledged) is cut off; values beyond the memory budget are read from disk', async () => {
  const c = config({ memoryBytes: 0 })
  const spool = await Spool.open(c)
  await spool.append([rec('a', 5000), rec('b', 5000)])
  await spool.close()
  // A frame torn right after the intact ones (the rest of a segment is zero-filled).
  const path = join(c.dir, segments(c.dir)[0])
  writeFileSync(path, Buffer.concat([readFileSync(path).subarray(0, scanFrames(readFileSync(path)).validBytes), Buffer.from([200, 0, 0, 0, 1, 2, 3])]))
  const again = await Spool.open(c)
  const entries = again.take(1 << 20, 10)
  assert.deepEqual(entries.map((e) => e.key), ['a@0', 'b@0'])
  assert.equal(entries[1].value, undefined)
  assert.deepEqual(await again.valueOf(entries[1]), Buffer.alloc(5000, 'b'))
  await again.close()
  rmSync(c.dir, { recursive: true })
})

test('segments are deleted once all they hold is safe; acked mode is safe at the Kafka ack', async () => {
  const c = config({ retainUntil: 'acked', segmentBytes: 64 * 1024 })
  const spool = await Spool.open(c)
  for (let i = 0; i < 40; i++) await spool.append([rec(`k${i}`, 10_000)])
  assert.ok(segments(c.dir).length > 3)
  const sent = spool.take(1 << 30, 1000)
  spool.forwarded(sent, spool.generation)
  assert.equal(spool.left().batches, 0)
  assert.equal(segments(c.dir).length, 2) // the active one, and the next one prepared ahead
  await spool.close()
  const again = await Spool.open(c)
  assert.equal(again.replayedAtOpen, 0)
  await again.close()
  rmSync(c.dir, { recursive: true })
})

test('a send answered after the broker restarted, and the broker restart itself, queue the records again', async () => {
  const c = config()
  const spool = await Spool.open(c)
  await spool.append([rec('a'), rec('b')])
  const [a, b] = spool.take(1 << 20, 10)
  const before = spool.generation
  spool.forwarded([a], before)
  assert.equal(spool.brokerRestarted(), 1)
  spool.forwarded([b], before) // acknowledged by the broker that is gone
  assert.deepEqual(spool.take(1 << 20, 10).map((e) => e.key).sort(), ['a@0', 'b@0'])
  await spool.close()
  rmSync(c.dir, { recursive: true })
})

test('beyond SPOOL_MAX_BYTES an append is refused with a 503 and Retry-After', async () => {
  const c = config({ maxBytes: 50_000 })
  const spool = await Spool.open(c)
  await spool.append([rec('a', 30_000)])
  await assert.rejects(async () => spool.append([rec('b', 30_000)]), (err: unknown) => {
    assert.ok(err instanceof ServiceUnavailableError)
    assert.equal(err.retryAfterSeconds, 5)
    assert.equal(err.toResponse().code, 'service_unavailable')
    return true
  })
  await spool.close()
  rmSync(c.dir, { recursive: true })
})

test('pacing holds per partition: a full partition waits while the others are sent', async () => {
  const c = config()
  const spool = await Spool.open(c, 0, 1000)
  for (let i = 0; i < 6; i++) await spool.append([rec(`a${i}`, 400, 1)])
  await spool.append([rec('b0', 400, 2)])
  const first = spool.take(1 << 20, 100)
  assert.deepEqual(first.map((e) => e.key), ['a0@1', 'a1@1', 'a2@1', 'b0@2'], 'partition 1 stops at its 1000 bytes; partition 2 goes ahead')
  spool.forwarded(first, spool.generation, first.map((e, i) => [{ partition: e.partition!, offset: BigInt(i) }]))
  assert.deepEqual(spool.take(1 << 20, 100), [], 'nothing more while partition 1 waits for its commits')
  spool.committedOffsets(new Map([[1, 3n]]), spool.generation)
  assert.deepEqual(spool.take(1 << 20, 100).map((e) => e.key), ['a3@1', 'a4@1', 'a5@1'])
  await spool.close()
  rmSync(c.dir, { recursive: true })
})

test('linger: a partition with records outstanding holds new ones until its oldest is SPOOL_LINGER_MS old, then sends them together', async () => {
  const c = config({ lingerMs: 50 })
  const spool = await Spool.open(c)
  await spool.append([rec('a0', 100, 1)])
  const t0 = Date.now()
  const first = spool.take(1 << 20, 100, t0)
  assert.deepEqual(first.map((e) => e.key), ['a0@1'], 'nothing outstanding: sent at once')
  spool.forwarded(first, spool.generation, [[{ partition: 1, offset: 0n }]])
  await spool.append([rec('a1', 100, 1), rec('b0', 100, 2)])
  await spool.append([rec('a2', 100, 1)])
  const now = Date.now()
  assert.deepEqual(spool.take(1 << 20, 100, now).map((e) => e.key), ['b0@2'], 'partition 2 has nothing outstanding; partition 1 waits')
  assert.ok(spool.lingerEndsAt > now && spool.lingerEndsAt <= now + 50, `the forwarder is told when: ${spool.lingerEndsAt - now} ms`)
  const second = spool.take(1 << 20, 100, now + 60)
  assert.deepEqual(second.map((e) => e.key), ['a1@1', 'a2@1'], 'then all of partition 1 at once')
  spool.forwarded(second, spool.generation, [[{ partition: 1, offset: 1n }], [{ partition: 1, offset: 2n }]])
  await spool.append([rec('a3', 100, 1)])
  spool.committedOffsets(new Map([[1, 1n]]), spool.generation)
  assert.deepEqual(spool.take(1 << 20, 100).map((e) => e.key), [], 'a1 and a2 are still outstanding')
  spool.committedOffsets(new Map([[1, 3n]]), spool.generation)
  assert.deepEqual(spool.take(1 << 20, 100).map((e) => e.key), ['a3@1'], 'all committed: sent at once')
  await spool.close()
  const acked = await Spool.open(config({ lingerMs: 50, retainUntil: 'acked' }))
  await acked.append([rec('x0', 100, 1), rec('x1', 100, 1)])
  assert.equal(acked.take(1 << 20, 100).length, 2, 'acked mode never lingers')
  await acked.close()
  rmSync(c.dir, { recursive: true })
})

test('a stuck partition is sent again, but not the records the broker still holds', async () => {
  const c = config()
  const spool = await Spool.open(c)
  await spool.append(Array.from({ length: 10 }, (_, i) => rec(`s${i}`, 100, i < 5 ? 0 : 1)))
  const sent = spool.take(1 << 20, 1000)
  const t0 = Date.now()
  // Partition 0 at offsets 0..4, partition 1 at offsets 0..4; the group commits nothing for 61 s.
  spool.forwarded(sent, spool.generation, sent.map((e, i) => [{ partition: e.partition!, offset: BigInt(i % 5) }]))
  // The broker still holds all of partition 0, and only offsets 3.. of partition 1.
  spool.brokerHolds(new Map([[0, { low: 0n, high: 5n }], [1, { low: 3n, high: 5n }]]), spool.generation, t0 + 50_000)
  assert.equal(spool.resendStale(60_000, t0 + 61_000), 3, 'only the three records the broker no longer holds')
  assert.deepEqual(spool.take(1 << 20, 1000).map((e) => e.key), ['s5@1', 's6@1', 's7@1'])
  // What the broker held is stale after the period (or read under another generation): all of it again.
  assert.equal(spool.resendStale(60_000, t0 + 200_000), 7)
  await spool.close()
  rmSync(c.dir, { recursive: true })
})

test('a broker log whose end moved back (a restart nobody noticed) vouches for nothing sent before', async () => {
  const c = config()
  const spool = await Spool.open(c)
  await spool.append(Array.from({ length: 4 }, (_, i) => rec(`r${i}`)))
  const sent = spool.take(1 << 20, 1000)
  const t0 = Date.now()
  spool.forwarded(sent, spool.generation, sent.map((_, i) => [{ partition: 0, offset: BigInt(10 + i) }]))
  spool.brokerHolds(new Map([[0, { low: 0n, high: 14n }]]), spool.generation, t0 + 10_000)
  assert.equal(spool.resendStale(60_000, t0 + 61_000), 0, 'all four still held')
  // The end fell to 3 and grew past the old offsets again: other records stand there now.
  spool.brokerHolds(new Map([[0, { low: 0n, high: 3n }]]), spool.generation, t0 + 62_000)
  spool.brokerHolds(new Map([[0, { low: 0n, high: 20n }]]), spool.generation, t0 + 63_000)
  assert.equal(spool.resendStale(60_000, t0 + 64_000), 4)
  await spool.close()
  rmSync(c.dir, { recursive: true })
})
