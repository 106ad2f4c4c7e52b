import { test } from 'node:test'
import assert from 'node:assert/strict'
import { leaseMsFor, retryDelayMs } from './deferral.js'

test('an open circuit: the wait plus up to a fifth of it (at least 100 ms) of spread', () => {
  assert.equal(retryDelayMs({ verdict: 'open', waitMs: 30_000 }, 15_000, () => 0), 30_000)
  assert.equal(retryDelayMs({ verdict: 'open', waitMs: 30_000 }, 15_000, () => 0.5), 33_000)
  assert.equal(retryDelayMs({ verdict: 'open', waitMs: 200 }, 15_000, () => 0.5), 250)
})

test('busy: the fallback wake-up is one to three leases away', () => {
  assert.equal(retryDelayMs({ verdict: 'busy_endpoint', waitMs: 10 }, 15_000, () => 0), 15_000)
  assert.equal(retryDelayMs({ verdict: 'busy_tenant', waitMs: 10 }, 15_000, () => 0.999), 44_970)
  assert.equal(leaseMsFor(10_000), 15_000)
})
