import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { JobView, QueueStatus } from './client.js'
import { billingRunLine, describeJob, every, formatAggregators, formatJobs, formatStatus, progressLine } from './format.js'

const zero = { waiting: 0, active: 0, delayed: 0, prioritized: 0, 'waiting-children': 0, completed: 0, failed: 0 }

test('cadences read as people say them', () => {
  assert.deepEqual([every(60_000), every(15 * 60_000), every(7_200_000), every(1500), every(2000)], ['1 min', '15 min', '2 h', '1500 ms', '2 s'])
})

test('the jobs table lines up its columns', () => {
  assert.equal(formatJobs([
    { name: 'subscription-billing', every_ms: 120_000, next_run_at: '2026-11-25T10:02:00.000Z' },
    { name: 'stale-webhook-retry', every_ms: 600_000, next_run_at: null },
  ]), [
    'JOB                   EVERY   NEXT RUN',
    'subscription-billing  2 min   2026-11-25T10:02:00.000Z',
    'stale-webhook-retry   10 min  -',
  ].join('\n'))
})

test('status: counts per queue (waiting includes prioritized and waiting-children), then failures', () => {
  const queues: QueueStatus[] = [
    { queue: 'scheduler', counts: { ...zero, waiting: 1, prioritized: 2, completed: 40, failed: 1 },
      recent_failures: [{ id: '12', name: 'invoice-finalization', failed_reason: 'deadlock detected\n  at x', attempts_made: 1, failed_at: '2026-11-25T10:00:00.000Z' }] },
    { queue: 'webhook-delivery', counts: { ...zero, delayed: 3 }, recent_failures: [] },
  ]
  assert.equal(formatStatus(queues), [
    'QUEUE             WAITING  ACTIVE  DELAYED  COMPLETED  FAILED',
    'scheduler         3        0       0        40         1',
    'webhook-delivery  0        0       3        0          0',
    '',
    'recent failures (retry: npm run admin -- jobs retry <id> --queue <queue>)',
    'QUEUE      ID  JOB                   FAILED AT                 ATTEMPTS  REASON',
    'scheduler  12  invoice-finalization  2026-11-25T10:00:00.000Z  1         deadlock detected',
  ].join('\n'))
  assert.match(formatStatus([queues[1]]), /\n\nno failed jobs$/)
})

test('progress lines and job descriptions', () => {
  const job: JobView = {
    queue: 'scheduler', id: '5', name: 'subscription-billing', state: 'active', data: {}, attempts_made: 0, return_value: null,
    failed_reason: null, created_at: '2026-11-25T10:00:00.000Z', processed_at: '2026-11-25T10:00:00.100Z', finished_at: null,
  }
  assert.equal(progressLine(job, 1234), '[   1.2s] subscription-billing #5 active')
  assert.equal(progressLine({ ...job, attempts_made: 1 }, 61_000), '[  61.0s] subscription-billing #5 active (attempt 2)')
  assert.equal(progressLine({ ...job, state: 'completed', attempts_made: 1, return_value: 12 }, 2000), '[   2.0s] subscription-billing #5 completed: 12 item(s)')
  assert.equal(progressLine({ ...job, state: 'failed', attempts_made: 1, failed_reason: 'boom' }, 2000), '[   2.0s] subscription-billing #5 failed: boom')
  assert.equal(describeJob({ ...job, state: 'completed', attempts_made: 2, return_value: 3 }), 'scheduler job 5 (subscription-billing): completed, 2 attempt(s), returned 3')
  assert.equal(describeJob({ ...job, state: 'failed', attempts_made: 1, failed_reason: 'boom' }), 'scheduler job 5 (subscription-billing): failed, 1 attempt(s), last failure: boom')
})

test('a billing run progress line: done / total, invoices, failures, rate and ETA', () => {
  const run = { id: 'subscription-billing:7', state: 'running' as const, subscriptions: 4200, total: 10000, invoices: 4095, failures: 1, rate: 228.3, eta_seconds: 25 }
  assert.equal(billingRunLine(run), '  billing run subscription-billing:7 running: 4,200 / 10,000 subscriptions, 4,095 invoices, 1 failed, 228.3/s, ETA 25 s')
  assert.equal(billingRunLine({ ...run, state: 'completed', subscriptions: 10000, eta_seconds: 0 }), '  billing run subscription-billing:7 completed: 10,000 / 10,000 subscriptions, 4,095 invoices, 1 failed, 228.3/s')
})

test('aggregator consumers as a table: partitions listed, none shown as a dash', () => {
  assert.equal(formatAggregators([
    { name: 'aggregator-1', partitions: [0, 2], shards: 32, events: 1200, writes: 7 },
    { name: 'aggregator-3', partitions: [], shards: 0, events: 0, writes: 0 },
  ]), [
    'CONSUMER      PARTITIONS  SHARDS  EVENTS  WRITES',
    'aggregator-1  0,2         32      1200    7',
    'aggregator-3  -           0       0       0',
  ].join('\n'))
})
