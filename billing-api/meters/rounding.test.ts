// Rounding of a meter's aggregated quantity and the meter definition rules (pure).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { roundQuantity } from './rounding.js'
import { checkAggregation, checkRounding } from './meter-rules.js'

test('roundQuantity: UP toward +infinity, DOWN toward -infinity, HALF_UP ties away from zero', () => {
  assert.equal(roundQuantity('1.218', { mode: 'UP', precision: 1 }), '1.3')
  assert.equal(roundQuantity('1.2', { mode: 'UP', precision: 1 }), '1.2', 'already at the precision')
  assert.equal(roundQuantity('-1.25', { mode: 'UP', precision: 1 }), '-1.2')
  assert.equal(roundQuantity('1.99', { mode: 'DOWN', precision: 0 }), '1')
  assert.equal(roundQuantity('-1.01', { mode: 'DOWN', precision: 0 }), '-2')
  assert.equal(roundQuantity('2.345', { mode: 'HALF_UP', precision: 2 }), '2.35')
  assert.equal(roundQuantity('-2.345', { mode: 'HALF_UP', precision: 2 }), '-2.35')
  assert.equal(roundQuantity('0.000000000001', { mode: 'UP', precision: 0 }), '1')
  assert.equal(roundQuantity('123456789012345678901234.5', { mode: 'HALF_UP', precision: 0 }), '123456789012345678901235', 'no float')
  assert.equal(roundQuantity('1.218', { mode: 'NONE', precision: 0 }), '1.218')
  assert.equal(roundQuantity('1.218', null), '1.218')
})

test('checkRounding and checkAggregation normalise and refuse', () => {
  assert.deepEqual(checkRounding({ mode: 'UP', precision: 2 }), { mode: 'UP', precision: 2 })
  assert.equal(checkRounding(null), null)
  assert.throws(() => checkRounding({ mode: 'UP', precision: 13 }), /rounding.precision must be an integer from 0 to 12/)
  assert.deepEqual(checkAggregation({ type: 'SUM', expression: 'a*2' }), { type: 'SUM', field: null, expression: 'a*2', multiplier: null, group_by: null })
  assert.throws(() => checkAggregation({ type: 'MAX', expression: 'a * (b' }), /aggregation.expression: expected '\)' but found end of expression at position 7/)
  assert.throws(() => checkAggregation({ type: 'COUNT', expression: 'a' }), /not allowed for COUNT/)
  assert.throws(() => checkAggregation({ type: 'WEIGHTED_SUM' }), /aggregation.field \(or aggregation.expression\) is required for WEIGHTED_SUM/)
  assert.throws(() => checkAggregation({ type: 'SUM', field: 'n', multiplier: '0' }), /multiplier must be greater than 0/)
})
