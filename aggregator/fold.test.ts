import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Decimal } from 'decimal.js'
import { BucketFolder, scaled, unscaled } from './fold.js'

test('decimal texts survive the scaled integer round trip exactly', () => {
  for (const t of ['0', '1', '-1', '0.000000000001', '-0.5', '12345678901234567890123456.123456789012', '3.10']) {
    assert.equal(unscaled(scaled(t)), new Decimal(t).toFixed())
  }
})

const row = (customer: string, minute: number, value: string, latest: [number, string, string], uniq: string[] = [], origin = '') =>
  ['t', 'e', 'm', customer, minute, [], '', value, 1, value, latest, uniq, '', [], origin]

test('rows of one bucket fold as the table merges them; other buckets and origins stay apart', () => {
  const f = new BucketFolder()
  f.add(row('c1', 60, '1.25', [1000, 'b', '1.25'], ['x']))
  f.add(row('c1', 60, '-0.25', [1000, 'a', '-0.25'], ['y']))
  f.add(row('c1', 60, '7', [999, 'z', '7'], ['x']))
  f.add(row('c2', 60, '5', [1, 'a', '5']))
  f.add(row('c1', 60, '2', [5, 'q', '2'], [], 'bf:1'))
  const rows = f.rows()
  assert.equal(rows.length, 3)
  const c1 = rows.find((r) => r[3] === 'c1' && r[14] === '')!
  assert.equal(c1[7], '8')
  assert.equal(c1[8], 3)
  assert.equal(c1[9], '7')
  assert.deepEqual(c1[10], [1000, 'b', '1.25'])
  assert.deepEqual([...(c1[11] as string[])].sort(), ['x', 'y'])
  assert.equal(f.rowsIn, 5)
})

test('integer sums stay exact as numbers, and switch to scaled decimals on the first fraction', () => {
  const f = new BucketFolder()
  f.add(row('c', 60, '999999999999999', [1, 'a', '1']))
  f.add(row('c', 60, '999999999999999', [2, 'b', '1']))
  f.add(row('c', 60, '-3', [3, 'c', '1']))
  assert.equal(f.rows()[0][7], '1999999999999995')
  const g = new BucketFolder()
  g.add(row('c', 60, '4', [1, 'a', '1']))
  g.add(row('c', 60, '0.000000000001', [2, 'b', '1']))
  g.add(row('c', 60, '6', [3, 'c', '1']))
  assert.equal(g.rows()[0][7], '10.000000000001')
})
