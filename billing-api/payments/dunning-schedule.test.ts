import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfig } from '../../platform/config.js'
import { nextRetryAt, retryJobId } from './dunning-schedule.js'

const DAY = 86_400_000
const failedAt = new Date('2026-09-15T10:00:00Z')

test('the n-th failure retries after the n-th delay; past the schedule there is no retry', () => {
  const schedule = [DAY, 3 * DAY, 5 * DAY]
  assert.equal(nextRetryAt(schedule, 1, failedAt)?.toISOString(), '2026-09-16T10:00:00.000Z')
  assert.equal(nextRetryAt(schedule, 2, failedAt)?.toISOString(), '2026-09-18T10:00:00.000Z')
  assert.equal(nextRetryAt(schedule, 3, failedAt)?.toISOString(), '2026-09-20T10:00:00.000Z')
  assert.equal(nextRetryAt(schedule, 4, failedAt), null)
  assert.equal(nextRetryAt(schedule, 0, failedAt), null)
  assert.equal(nextRetryAt([], 1, failedAt), null)
  assert.equal(retryJobId('inv_1', 2), 'dunning-inv_1-2')
})

test('PAYMENT_RETRY_SCHEDULE: default 1d,3d,5d; units ms/s/m/h/d; none disables; bad values stop start-up', () => {
  assert.deepEqual(loadConfig({}).paymentRetryScheduleMs, [DAY, 3 * DAY, 5 * DAY])
  assert.deepEqual(loadConfig({ PAYMENT_RETRY_SCHEDULE: '12h, 30m,10s,250ms' }).paymentRetryScheduleMs, [43_200_000, 1_800_000, 10_000, 250])
  assert.deepEqual(loadConfig({ PAYMENT_RETRY_SCHEDULE: 'none' }).paymentRetryScheduleMs, [])
  assert.deepEqual(loadConfig({ PAYMENT_RETRY_SCHEDULE: '' }).paymentRetryScheduleMs, [DAY, 3 * DAY, 5 * DAY])
  for (const bad of ['1w', '0d', '-1d', '1.5d', 'd', '1d,,2d']) {
    assert.throws(() => loadConfig({ PAYMENT_RETRY_SCHEDULE: bad }), /PAYMENT_RETRY_SCHEDULE/, bad)
  }
})
