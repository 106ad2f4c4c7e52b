import { test } from 'node:test'
import assert from 'node:assert/strict'
import { boundary, calendarAnchor, nextBoundary } from './periods.js'

const d = (s: string) => new Date(s)

test('monthly boundaries clamp to month end and return to the anchor day', () => {
  const anchor = d('2026-01-31T10:00:00Z')
  assert.equal(boundary(anchor, 'MONTHLY', 1, 1).toISOString(), '2026-02-28T10:00:00.000Z')
  assert.equal(boundary(anchor, 'MONTHLY', 1, 2).toISOString(), '2026-03-31T10:00:00.000Z')
  assert.equal(boundary(d('2024-01-31T00:00:00Z'), 'MONTHLY', 1, 1).toISOString(), '2024-02-29T00:00:00.000Z')
})

test('quarterly, half-yearly, annual and multi-count periods', () => {
  const anchor = d('2026-11-15T00:00:00Z')
  assert.equal(boundary(anchor, 'QUARTERLY', 1, 1).toISOString(), '2027-02-15T00:00:00.000Z')
  assert.equal(boundary(anchor, 'HALF_YEARLY', 1, 1).toISOString(), '2027-05-15T00:00:00.000Z')
  assert.equal(boundary(anchor, 'ANNUAL', 1, 1).toISOString(), '2027-11-15T00:00:00.000Z')
  assert.equal(boundary(anchor, 'MONTHLY', 2, 1).toISOString(), '2027-01-15T00:00:00.000Z')
  assert.equal(boundary(anchor, 'WEEKLY', 1, 2).toISOString(), '2026-11-29T00:00:00.000Z')
  assert.equal(boundary(anchor, 'DAILY', 3, 1).toISOString(), '2026-11-18T00:00:00.000Z')
})

test('nextBoundary is the first boundary strictly after the instant', () => {
  const anchor = d('2026-01-31T00:00:00Z')
  assert.equal(nextBoundary(anchor, 'MONTHLY', 1, anchor).toISOString(), '2026-02-28T00:00:00.000Z')
  assert.equal(nextBoundary(anchor, 'MONTHLY', 1, d('2026-02-28T00:00:00Z')).toISOString(), '2026-03-31T00:00:00.000Z')
  assert.equal(nextBoundary(anchor, 'MONTHLY', 1, d('2026-07-01T00:00:00Z')).toISOString(), '2026-07-31T00:00:00.000Z')
  assert.equal(nextBoundary(d('2026-01-01T00:00:00Z'), 'DAILY', 1, d('2026-03-01T12:00:00Z')).toISOString(), '2026-03-02T00:00:00.000Z')
})

test('calendar anchors', () => {
  const start = d('2026-11-22T13:45:00Z') // a Sunday
  assert.equal(calendarAnchor(start, 'MONTHLY').toISOString(), '2026-11-01T00:00:00.000Z')
  assert.equal(calendarAnchor(start, 'QUARTERLY').toISOString(), '2026-10-01T00:00:00.000Z')
  assert.equal(calendarAnchor(start, 'ANNUAL').toISOString(), '2026-01-01T00:00:00.000Z')
  assert.equal(calendarAnchor(start, 'WEEKLY').toISOString(), '2026-11-16T00:00:00.000Z')
})
