import { test } from 'node:test'
import assert from 'node:assert/strict'
import { retrying, retryingFor } from './retry.js'

test('retrying: the last error after the attempts; success as soon as one answers', async () => {
  let calls = 0
  await assert.rejects(retrying(async () => { calls++; throw new Error(`no ${calls}`) }, 3, 1), /no 3/)
  assert.equal(calls, 3)
  calls = 0
  assert.equal(await retrying(async () => (++calls < 2 ? Promise.reject(new Error('not yet')) : 'ok'), 3, 1), 'ok')
  assert.equal(calls, 2)
})

test('retryingFor: retries with reports until it answers; a final error at once; gives up after its time', async () => {
  const waits: number[] = []
  let calls = 0
  const answered = await retryingFor(async () => (++calls < 4 ? Promise.reject(new Error('down')) : 'up'), { forMs: 10_000, baseMs: 5, maxMs: 12, onRetry: (_e, w) => waits.push(w) })
  assert.equal(answered, 'up')
  assert.deepEqual(waits, [5, 10, 12], 'doubling, capped')

  class Refusal extends Error {}
  calls = 0
  await assert.rejects(retryingFor(async () => { calls++; throw new Refusal('refused') }, { forMs: 10_000, baseMs: 5, final: (e) => e instanceof Refusal }), Refusal)
  assert.equal(calls, 1)

  calls = 0
  const started = Date.now()
  await assert.rejects(retryingFor(async () => { calls++; throw new Error('still down') }, { forMs: 60, baseMs: 10, maxMs: 10 }), /still down/)
  assert.ok(calls >= 2 && Date.now() - started < 5000)
})
