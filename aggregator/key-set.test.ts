import { test } from 'node:test'
import assert from 'node:assert/strict'
import { eventDigest } from '../schemas/shards.js'
import { KeySet } from './key-set.js'

test('a key set holds what was added, across growth, and nothing else', () => {
  const set = new KeySet(16)
  const digests = Array.from({ length: 50_000 }, (_, i) => eventDigest('t', 'e', `evt-${i}`))
  for (const d of digests.slice(0, 25_000)) assert.equal(set.add(d, 20_000), true)
  for (const d of digests.slice(0, 1000)) assert.equal(set.add(d, 20_000), false, 'a second add reports the key present')
  assert.equal(set.size, 25_000)
  for (const d of digests.slice(0, 25_000)) assert.equal(set.has(d), true)
  for (const d of digests.slice(25_000)) assert.equal(set.has(d), false)
})

test('digests that differ only in their check half are different keys', () => {
  const set = new KeySet()
  const a = { hi1: 7, hi0: 9, lo1: 1, lo0: 2 }
  set.add(a, 1)
  assert.equal(set.has({ ...a, lo0: 3 }), false)
  assert.equal(set.has({ hi1: 0, hi0: 0, lo1: 0, lo0: 0 }), false)
  set.add({ hi1: 0, hi0: 0, lo1: 0, lo0: 0 }, 1)
  assert.equal(set.has({ hi1: 0, hi0: 0, lo1: 0, lo0: 0 }), true)
  assert.equal(set.size, 2)
})

test('evictBefore drops the keys of events before a minute and keeps the rest, whatever order they came in', () => {
  const set = new KeySet(16)
  const old = Array.from({ length: 5000 }, (_, i) => eventDigest('t', 'e', `old-${i}`))
  const recent = Array.from({ length: 16_000 }, (_, i) => eventDigest('t', 'e', `new-${i}`))
  old.forEach((d, i) => set.add(d, 100 + (i % 50)))
  for (const d of recent) set.add(d, 160)
  assert.equal(set.add(old[0], 500), false, 'present: its first minute stays')
  assert.equal(set.evictBefore(150), 5000)
  assert.equal(set.size, 16_000)
  for (const d of recent) assert.equal(set.has(d), true)
  assert.equal(old.filter((d) => set.has(d)).length, 0)
  // Memory follows the live keys: after an eviction, room for a quarter more (a minute of a
  // window's growth) at the 70 % load, in a power of two: 16,000 keys in 32,768 slots.
  assert.ok(set.bytes <= 32_768 * 5 * 4, `${set.bytes} bytes`)
  // The all-zero digest is evicted by its minute too.
  set.add({ hi1: 0, hi0: 0, lo1: 0, lo0: 0 }, 149)
  assert.equal(set.evictBefore(150), 1)
})
