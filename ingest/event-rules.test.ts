import { test } from 'node:test'
import assert from 'node:assert/strict'
import { checkEvents, numericMisfit } from './event-rules.js'

test('numeric property values must fit Decimal(38, 12) exactly', () => {
  for (const ok of [0, 1, -1.5, 0.1, 1e-7, 1e-12, 123456789012345, '1.5', ' 2.25 ', '1.500000000000000000', '0.000000000001', '12345678901234567890123456.1', 'abc', '1e5', '123456789012345678901234567890', true, null]) {
    assert.equal(numericMisfit(ok), undefined, String(ok))
  }
  assert.match(numericMisfit('1.0000000000000000001')!, /19 decimal places/)
  assert.match(numericMisfit(0.1 + 0.2)!, /17 decimal places/)
  assert.match(numericMisfit(1e-13)!, /13 decimal places/)
  assert.match(numericMisfit(1e26)!, /27 integer digits/)
  assert.match(numericMisfit('-123456789012345678901234567.0')!, /27 integer digits/)
})

test('timestamps inside [minTime, now + maxFutureMinutes]; the error names the event', () => {
  const window = { minTime: new Date('2000-01-01T00:00:00Z'), maxFutureMinutes: 5, maxAgeDays: 0 }
  const now = Date.parse('2026-11-25T10:00:00Z')
  const ev = (timestamp?: string) => ({ event_name: 'e', external_customer_id: 'c', ...(timestamp ? { timestamp } : {}) })
  const bulk = (i: number) => `events[${i}].`
  checkEvents([ev(), ev('2000-01-01T00:00:00Z'), ev('2026-11-25T10:05:00Z')], window, now, bulk)
  assert.throws(() => checkEvents([ev(), ev('1999-12-31T23:59:59.999Z')], window, now, bulk), /^ValidationError: events\[1\]\.timestamp must be between 2000-01-01T00:00:00.000Z and 5 minutes from now/)
  assert.throws(() => checkEvents([ev('2026-11-25T10:05:00.001Z')], window, now, () => ''), /^ValidationError: timestamp must be between/)
  assert.throws(() => checkEvents([{ ...ev(), properties: { a: { b: [1, 0.30000000000000004] } } }], window, now, bulk), /events\[0\]\.properties\.a\.b\[1\] has 17 decimal places/)
})

test('with INGEST_MAX_EVENT_AGE_DAYS, an event older than the window is refused, one just inside is taken', () => {
  const window = { minTime: new Date('2000-01-01T00:00:00Z'), maxFutureMinutes: 5, maxAgeDays: 35 }
  const now = Date.parse('2026-11-25T10:00:00Z')
  const ev = (timestamp: string) => ({ event_name: 'e', external_customer_id: 'c', timestamp })
  checkEvents([ev('2026-10-21T10:00:00Z')], window, now, () => '')
  assert.throws(
    () => checkEvents([ev('2026-10-21T10:00:00Z'), ev('2026-10-21T09:59:59.999Z')], window, now, (i) => `events[${i}].`),
    /^ValidationError: events\[1\]\.timestamp must be between 2026-10-21T10:00:00.000Z \(35 days ago: INGEST_MAX_EVENT_AGE_DAYS\) and 5 minutes from now/,
  )
})
