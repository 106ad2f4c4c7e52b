import { test } from 'node:test'
import assert from 'node:assert/strict'
import { isRetryable, retryAfterMs, retryDelayMs, type RetryPolicy } from './retry-policy.js'

const policy: RetryPolicy = { maxAttempts: 6, baseDelayMs: 200, maxDelayMs: 1000 }

test('only answers that can change on a resend are retried', () => {
  for (const s of ['network', 408, 429, 500, 502, 503, 504] as const) assert.equal(isRetryable(s), true, String(s))
  for (const s of [400, 401, 403, 404, 409, 413, 414, 422, 431]) assert.equal(isRetryable(s), false, String(s))
})

test('backoff doubles, half of it jittered, and stops at maxDelayMs', () => {
  // attempt n: exp = min(1000, 200 * 2^(n-1)); delay = exp/2 + exp/2 * random
  assert.equal(retryDelayMs(1, policy, 0), 100)
  assert.equal(retryDelayMs(1, policy, 1), 200)
  assert.equal(retryDelayMs(2, policy, 0.5), 300) // 400/2 + 400/2 * 0.5
  assert.equal(retryDelayMs(3, policy, 0), 400) // 800/2
  assert.equal(retryDelayMs(4, policy, 1), 1000) // 1600 capped at 1000
  assert.equal(retryDelayMs(10, policy, 0), 500)
})

test("the server's Retry-After is a floor, even above maxDelayMs", () => {
  assert.equal(retryDelayMs(1, policy, 0, 5000), 5000)
  assert.equal(retryDelayMs(3, policy, 1, 50), 800)
  assert.equal(retryAfterMs('3', 0), 3000)
  assert.equal(retryAfterMs(' 0 ', 0), 0)
  assert.equal(retryAfterMs('Wed, 25 Nov 2026 10:00:10 GMT', Date.parse('2026-11-25T10:00:00Z')), 10_000)
  assert.equal(retryAfterMs('Wed, 25 Nov 2026 10:00:10 GMT', Date.parse('2026-11-25T11:00:00Z')), 0)
  assert.equal(retryAfterMs(null, 0), undefined)
  assert.equal(retryAfterMs('soon', 0), undefined)
})
