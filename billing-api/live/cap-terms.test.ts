// The window in which a feature's cap terms computed at one instant stay valid.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { undatedWindow } from './cap-terms.js'

const at = Date.parse('2026-11-15T00:00:00Z')
const d = (iso: string) => new Date(iso)

test('bounded by the latest date at or before the instant and the earliest after it', () => {
  const w = undatedWindow([
    { start_date: d('2026-01-01T00:00:00Z'), end_date: null },
    { start_date: d('2026-11-15T00:00:00Z'), end_date: d('2026-12-01T00:00:00Z') },
    { start_date: d('2026-11-20T00:00:00Z'), end_date: d('2027-01-01T00:00:00Z') },
    { start_date: null, end_date: d('2026-10-01T00:00:00Z') },
  ], at)
  assert.equal(w.from, at, 'a start exactly at the instant bounds it (grants include start_date <= at)')
  assert.equal(w.until, Date.parse('2026-11-20T00:00:00Z'))
})

test('no dates: valid at every instant', () => {
  assert.deepEqual(undatedWindow([{ start_date: null, end_date: null }], at), { from: -Infinity, until: Infinity })
  assert.deepEqual(undatedWindow([], at), { from: -Infinity, until: Infinity })
})

test('an end date exactly at the instant: the item is already over, and stays over', () => {
  const w = undatedWindow([{ start_date: d('2026-01-01T00:00:00Z'), end_date: new Date(at) }], at)
  assert.equal(w.from, at)
  assert.equal(w.until, Infinity)
})
