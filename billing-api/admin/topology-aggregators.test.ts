import { test } from 'node:test'
import assert from 'node:assert/strict'
import { settled } from './topology-aggregators.js'

const view = (name: string, partitions: number[]) => ({ name, partitions, shards: 0, events: 0, writes: 0 })

test('a change to 3 aggregator processes is not settled while the third runs no consumer yet', () => {
  // two processes of two consumers hold the 16 partitions; the third answers, its consumers not started
  const two = [
    [view('a:1', [0, 4, 8, 12]), view('a:2', [1, 5, 9, 13])],
    [view('b:1', [2, 6, 10, 14]), view('b:2', [3, 7, 11, 15])],
  ]
  assert.equal(settled(3, 16, [...two, []]), false)
  assert.equal(settled(3, 16, [...two, [view('c:1', [])]]), false, 'its consumer holds nothing yet')
  const three = [
    [view('a:1', [0, 6, 12]), view('a:2', [1, 7, 13])],
    [view('b:1', [2, 8]), view('b:2', [3, 9])],
    [view('c:1', [4, 10, 14]), view('c:2', [5, 11, 15])],
  ]
  assert.equal(settled(3, 16, three), true)
  assert.equal(settled(3, 16, [three[0], three[1], [view('c:1', [4, 10, 14]), view('c:2', [5, 11])]]), false, 'a partition held by no one')
})

test('more consumers than partitions: settled once every partition is held, some consumers idle', () => {
  // three processes of two consumers, four partitions
  const perProcess = [[view('a:1', [0]), view('a:2', [1])], [view('b:1', [2]), view('b:2', [3])], [view('c:1', []), view('c:2', [])]]
  assert.equal(settled(3, 4, perProcess), true)
  assert.equal(settled(3, 4, [perProcess[0], perProcess[1], []]), false, 'the third process runs no consumer yet')
})

test('a partition reported by two consumers while another is held by none is not settled', () => {
  // mid-rebalance: an old owner still reports partition 0 that a new owner reports too, and 15 is held by no one;
  // the count of held partitions is the topic's all the same
  const perProcess = [
    [view('a:1', [0, 4, 8, 12]), view('a:2', [1, 5, 9, 13])],
    [view('b:1', [2, 6, 10, 14]), view('b:2', [3, 7, 11, 0])],
  ]
  assert.equal(settled(2, 16, perProcess), false)
})
