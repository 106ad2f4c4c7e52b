import { test } from 'node:test'
import assert from 'node:assert/strict'
import { eventDigest } from '../schemas/shards.js'
import { KeySet } from './key-set.js'

test('a key set holds what was added, across growth, and nothing else', () => {
  const set = new KeySet(16)
  const digests = Array.from({ length: 50_000 }, (_, i) => eventDigest('t', 'e', `evt-${i}`))
  for (const d of digests.slice(0, 25_000)) assert.equal(set.add(d), true)
  for (const d of digests.slice(0, 1000)) assert.equal(set.add(d), false, 'a second add reports the key present')
  assert.equal(set.size, 25_000)
  for (const d of digests.slice(0, 25_000)) assert.equal(set.has(d), true)
  for (const d of digests.slice(25_000)) assert.equal(set.has(d), false)
})

test('digests that differ only in their check half are different keys', () => {
  const set = new KeySet()
  const a = { hi1: 7, hi0: 9, lo1: 1, lo0: 2 }
  set.add(a)
  assert.equal(set.has({ ...a, lo0: 3 }), false)
  assert.equal(set.has({ hi1: 0, hi0: 0, lo1: 0, lo0: 0 }), false)
  set.add({ hi1: 0, hi0: 0, lo1: 0, lo0: 0 })
  assert.equal(set.has({ hi1: 0, hi0: 0, lo1: 0, lo0: 0 }), true)
  assert.equal(set.size, 2)
})
