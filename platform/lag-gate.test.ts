import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DomainError } from './errors.js'
import { LagGate } from './lag-gate.js'

test('the gate closes above the pending limit and reopens as the aggregator commits', () => {
  const gate = new LagGate(1000)
  gate.admit()
  gate.produced(1200)
  assert.throws(() => gate.admit(), (e: unknown) => e instanceof DomainError && e.code === 'too_many_requests' && e.httpStatus === 429)
  gate.consumed(300)
  gate.admit()
  gate.consumed(5000) // records from before this process started: never below zero
  assert.equal(gate.pendingBytes, 0)
})
