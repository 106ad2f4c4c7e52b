// The pure grant schedule, with dates worked out by hand.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { applicationKey, grantExpiry, grantSchedule, type GrantTerms, type SubscriptionTerms } from './grant-schedule.js'

const d = (s: string) => new Date(s)
const iso = (x: Date | null) => (x ? x.toISOString() : null)
const show = (ps: { period_start: Date; period_end: Date | null; scheduled_for: Date }[]) =>
  ps.map((p) => [iso(p.period_start), iso(p.period_end), iso(p.scheduled_for)])

const grant = (over: Partial<GrantTerms> = {}): GrantTerms => ({
  period: 'MONTHLY', period_count: 1, credit_grant_anchor: null, start_date: null, end_date: null, ...over,
})
const sub = (over: Partial<SubscriptionTerms> = {}): SubscriptionTerms => ({
  start_date: d('2026-08-15T00:00:00Z'), end_date: null, billing_anchor: d('2026-08-15T00:00:00Z'),
  billing_period: 'MONTHLY', billing_period_count: 1, ...over,
})

test('catch-up: a subscription backdated three monthly periods has 3 missed + the current period due, in order', () => {
  const s = grantSchedule(grant(), sub(), d('2026-11-20T00:00:00Z'), 2)
  assert.deepEqual(show(s.due), [
    ['2026-08-15T00:00:00.000Z', '2026-09-15T00:00:00.000Z', '2026-08-15T00:00:00.000Z'],
    ['2026-09-15T00:00:00.000Z', '2026-10-15T00:00:00.000Z', '2026-09-15T00:00:00.000Z'],
    ['2026-10-15T00:00:00.000Z', '2026-11-15T00:00:00.000Z', '2026-10-15T00:00:00.000Z'],
    ['2026-11-15T00:00:00.000Z', '2026-12-15T00:00:00.000Z', '2026-11-15T00:00:00.000Z'],
  ])
  assert.deepEqual(show(s.upcoming), [
    ['2026-12-15T00:00:00.000Z', '2027-01-15T00:00:00.000Z', '2026-12-15T00:00:00.000Z'],
    ['2027-01-15T00:00:00.000Z', '2027-02-15T00:00:00.000Z', '2027-01-15T00:00:00.000Z'],
  ])
})

test('a period is due at its start (scheduled_for <= now), not before', () => {
  const s = grantSchedule(grant(), sub(), d('2026-09-15T00:00:00Z'), 1)
  assert.deepEqual(s.due.map((p) => iso(p.period_start)), ['2026-08-15T00:00:00.000Z', '2026-09-15T00:00:00.000Z'])
  const before = grantSchedule(grant(), sub(), d('2026-09-14T23:59:59Z'), 1)
  assert.deepEqual(before.due.map((p) => iso(p.period_start)), ['2026-08-15T00:00:00.000Z'])
  assert.deepEqual(before.upcoming.map((p) => iso(p.period_start)), ['2026-09-15T00:00:00.000Z'])
})

test('month ends clamp like billing periods; period_count stretches the period', () => {
  const jan31 = sub({ start_date: d('2026-01-31T00:00:00Z'), billing_anchor: d('2026-01-31T00:00:00Z') })
  assert.deepEqual(show(grantSchedule(grant(), jan31, d('2026-03-31T00:00:00Z'), 0).due).map((p) => p[0]), [
    '2026-01-31T00:00:00.000Z', '2026-02-28T00:00:00.000Z', '2026-03-31T00:00:00.000Z',
  ])
  const every2 = grantSchedule(grant({ period_count: 2 }), sub(), d('2026-12-01T00:00:00Z'), 1)
  assert.deepEqual(show(every2.due), [
    ['2026-08-15T00:00:00.000Z', '2026-10-15T00:00:00.000Z', '2026-08-15T00:00:00.000Z'],
    ['2026-10-15T00:00:00.000Z', '2026-12-15T00:00:00.000Z', '2026-10-15T00:00:00.000Z'],
  ])
  assert.deepEqual(show(every2.upcoming), [['2026-12-15T00:00:00.000Z', '2027-02-15T00:00:00.000Z', '2026-12-15T00:00:00.000Z']])
})

test('BILLING_PERIOD follows the billing anchor and period; a later anchor gives a short first period', () => {
  const weekly = sub({ start_date: d('2026-11-02T12:00:00Z'), billing_anchor: d('2026-11-02T00:00:00Z'), billing_period: 'WEEKLY' })
  const s = grantSchedule(grant({ period: 'BILLING_PERIOD' }), weekly, d('2026-11-10T00:00:00Z'), 1)
  assert.deepEqual(show(s.due), [
    ['2026-11-02T12:00:00.000Z', '2026-11-09T00:00:00.000Z', '2026-11-02T12:00:00.000Z'],
    ['2026-11-09T00:00:00.000Z', '2026-11-16T00:00:00.000Z', '2026-11-09T00:00:00.000Z'],
  ])
  const anchored = grantSchedule(grant({ credit_grant_anchor: d('2026-09-01T00:00:00Z') }), sub(), d('2026-09-20T00:00:00Z'), 1)
  assert.deepEqual(show(anchored.due), [
    ['2026-08-15T00:00:00.000Z', '2026-09-01T00:00:00.000Z', '2026-08-15T00:00:00.000Z'],
    ['2026-09-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z', '2026-09-01T00:00:00.000Z'],
  ])
})

test('ANNUAL grants; grant start and end dates bound the periods', () => {
  const annual = grantSchedule(grant({ period: 'ANNUAL' }), sub(), d('2028-01-01T00:00:00Z'), 1)
  assert.deepEqual(annual.due.map((p) => iso(p.period_start)), ['2026-08-15T00:00:00.000Z', '2027-08-15T00:00:00.000Z'])
  assert.deepEqual(annual.upcoming.map((p) => iso(p.period_start)), ['2028-08-15T00:00:00.000Z'])
  const bounded = grantSchedule(
    grant({ start_date: d('2026-09-01T00:00:00Z'), end_date: d('2026-10-20T00:00:00Z') }), sub(), d('2027-01-01T00:00:00Z'), 3,
  )
  assert.deepEqual(show(bounded.due), [
    ['2026-09-01T00:00:00.000Z', '2026-09-15T00:00:00.000Z', '2026-09-01T00:00:00.000Z'],
    ['2026-09-15T00:00:00.000Z', '2026-10-15T00:00:00.000Z', '2026-09-15T00:00:00.000Z'],
    ['2026-10-15T00:00:00.000Z', '2026-10-20T00:00:00.000Z', '2026-10-15T00:00:00.000Z'],
  ])
  assert.deepEqual(bounded.upcoming, [])
  const ended = grantSchedule(grant(), sub({ end_date: d('2026-08-15T00:00:00Z') }), d('2027-01-01T00:00:00Z'))
  assert.deepEqual([ended.due, ended.upcoming], [[], []])
})

test('ONETIME: exactly one period at the subscription start, with no end', () => {
  const later = grantSchedule(grant({ period: 'ONETIME' }), sub(), d('2027-06-01T00:00:00Z'), 5)
  assert.deepEqual(show(later.due), [['2026-08-15T00:00:00.000Z', null, '2026-08-15T00:00:00.000Z']])
  assert.deepEqual(later.upcoming, [])
  const early = grantSchedule(grant({ period: 'ONETIME' }), sub(), d('2026-08-01T00:00:00Z'), 5)
  assert.deepEqual([early.due.length, early.upcoming.length], [0, 1])
})

test('expiry counts from period_start; none without a duration; keys name grant, subscription and period', () => {
  const start = d('2026-01-31T10:00:00Z')
  assert.equal(iso(grantExpiry(start, 30, 'DAY')), '2026-03-02T10:00:00.000Z')
  assert.equal(iso(grantExpiry(start, 2, 'WEEK')), '2026-02-14T10:00:00.000Z')
  assert.equal(iso(grantExpiry(start, 1, 'MONTH')), '2026-02-28T10:00:00.000Z')
  assert.equal(iso(grantExpiry(start, 1, 'YEAR')), '2027-01-31T10:00:00.000Z')
  assert.equal(grantExpiry(start, null, null), null)
  assert.equal(grantExpiry(start, 0, 'DAY'), null)
  assert.equal(applicationKey('cgrant_1', 'subs_1', start), 'cgrant_1:subs_1:2026-01-31T10:00:00.000Z')
})
