import { test } from 'node:test'
import assert from 'node:assert/strict'
import { cappedQuantity, usageCap } from './entitlement-limits.js'

test('usageCap: hard limits of every grant add up; a soft or unlimited grant lifts the cap; no grant, no cap', () => {
  assert.equal(usageCap([{ usage_limit: 100, is_soft_limit: false }]), '100')
  assert.equal(usageCap([{ usage_limit: 100, is_soft_limit: false }, { usage_limit: 50, is_soft_limit: false }]), '150')
  assert.equal(usageCap([{ usage_limit: 100, is_soft_limit: false }, { usage_limit: 50, is_soft_limit: true }]), null)
  assert.equal(usageCap([{ usage_limit: 100, is_soft_limit: false }, { usage_limit: null, is_soft_limit: false }]), null)
  assert.equal(usageCap([]), null)
})

test('cappedQuantity: the measured usage up to the cap, exact decimals', () => {
  assert.equal(cappedQuantity('150', '100'), '100')
  assert.equal(cappedQuantity('99.999', '100'), '99.999')
  assert.equal(cappedQuantity('100', '100'), '100')
  assert.equal(cappedQuantity('7', null), '7')
})
