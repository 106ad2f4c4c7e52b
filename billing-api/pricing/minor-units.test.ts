import { test } from 'node:test'
import assert from 'node:assert/strict'
import { toMinorUnits } from './minor-units.js'

test('amounts become integer minor units of their currency', () => {
  assert.equal(toMinorUnits('12.75', 'USD'), 1275)
  assert.equal(toMinorUnits('0.10', 'usd'), 10)
  assert.equal(toMinorUnits('1500', 'JPY'), 1500) // no minor unit
  assert.equal(toMinorUnits('1.234', 'KWD'), 1234) // three decimals
  assert.equal(toMinorUnits('-3.50', 'EUR'), -350)
  assert.equal(toMinorUnits('90071992547409.91', 'USD'), 9007199254740991) // 2^53 - 1
})

test('unreadable or inexact amounts are left out rather than rounded', () => {
  assert.equal(toMinorUnits('90071992547409.92', 'USD'), undefined, 'beyond 2^53 - 1 a float is not exact')
  assert.equal(toMinorUnits('1.005', 'USD'), undefined)
  assert.equal(toMinorUnits('abc', 'USD'), undefined)
  assert.equal(toMinorUnits(undefined, 'USD'), undefined)
  assert.equal(toMinorUnits('1.00', 'US'), undefined)
})
