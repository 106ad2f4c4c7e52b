import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newEventId, toRequests, withEventIds } from './event-batches.js'

test('ids and timestamps are given once, to the events without one, and the caller\'s are kept', () => {
  let n = 0
  const events = [
    { event_name: 'a', external_customer_id: 'c' },
    { event_id: 'mine', event_name: 'b', external_customer_id: 'c', timestamp: '2026-01-02T03:04:05.678Z' },
    { event_name: 'c', external_customer_id: 'c' },
  ]
  const keyed = withEventIds(events, () => `id-${++n}`, new Date('2026-11-28T00:00:00Z'))
  assert.deepEqual(keyed.map((e) => e.event_id), ['id-1', 'mine', 'id-2'])
  assert.deepEqual(keyed.map((e) => e.timestamp), ['2026-11-28T00:00:00.000Z', '2026-01-02T03:04:05.678Z', '2026-11-28T00:00:00.000Z'])
  assert.equal(n, 2)
  assert.equal(events[0].event_id, undefined, 'the input is not changed')
  assert.match(newEventId(), /^evt_[0-9a-f-]{36}$/)
  assert.notEqual(newEventId(), newEventId())
})

test('requests hold at most the limit, in order', () => {
  const ids = Array.from({ length: 2501 }, (_, i) => i)
  const parts = toRequests(ids)
  assert.deepEqual(parts.map((p) => p.length), [1000, 1000, 501])
  assert.deepEqual(parts.flat(), ids)
  assert.deepEqual(toRequests([1, 2, 3], 2), [[1, 2], [3]])
  assert.deepEqual(toRequests([]), [])
  assert.throws(() => toRequests([1], 0), RangeError)
})
