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

test('keys older than the horizon are dropped when the table is rebuilt; newer ones and re-added ones stay', () => {
  let keepFrom = 0
  const set = new KeySet(16, () => keepFrom)
  const old = Array.from({ length: 5000 }, (_, i) => eventDigest('t', 'e', `old-${i}`))
  const renewed = old.slice(0, 100)
  for (const d of old) set.add(d, 100)
  // The same events again with a later day (their copy arrived with a later timestamp): kept by the later day.
  for (const d of renewed) assert.equal(set.add(d, 200), false)
  keepFrom = 150
  const recent = Array.from({ length: 20_000 }, (_, i) => eventDigest('t', 'e', `new-${i}`))
  for (const d of recent) set.add(d, 160)
  assert.equal(set.size, 20_000 + 100)
  for (const d of recent) assert.equal(set.has(d), true)
  for (const d of renewed) assert.equal(set.has(d), true)
  assert.equal(old.slice(100).filter((d) => set.has(d)).length, 0)
  // Memory follows the live keys: 20,100 keys fit a table sized for about twice as many.
  assert.ok(set.bytes <= 65_536 * 5 * 4, `${set.bytes} bytes`)
})
