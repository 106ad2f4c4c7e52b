// The scheduler: jobs run on demand through the BullMQ queue (operators' CLI), each run is
// measured (runs by outcome, items, duration), and the CLI knows every job by name.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { ManualClock } from '../platform/clock.js'
import { PROJECT_ROOT } from '../platform/config.js'
import { schedulerJobItems, schedulerJobRuns, schedulerJobSeconds } from '../platform/metrics.js'
import { usePlatform } from '../test/support/platform.js'
import { created } from '../test/support/fixtures.js'
import { JOBS } from './jobs.js'

const clock = new ManualClock(new Date('2026-11-22T10:30:00Z'))
const p = usePlatform({ services: ['billing-api', 'scheduler'], clock })

async function metric(m: { get(): Promise<{ values: { labels: Record<string, unknown>; value: number; metricName?: string }[] }> }, labels: Record<string, string>, metricName?: string) {
  const { values } = await m.get()
  const hit = values.find((v) => (!metricName || v.metricName === metricName) && Object.entries(labels).every(([k, x]) => v.labels[k] === x))
  return hit?.value ?? 0
}

test('the subscription jobs are registered with their cadence', () => {
  const cadence = Object.fromEntries(Object.entries(JOBS).map(([name, def]) => [name, def.everyMs(p.ctx)]))
  assert.equal(cadence['subscription-trial-end'], 60_000)
  assert.equal(cadence['subscription-scheduled-cancellation'], 60_000)
  assert.equal(cadence['subscription-phase-start'], 60_000)
  assert.equal(cadence['auto-invoice-threshold'], 5 * 60_000)
  assert.equal(cadence['subscription-billing'], p.config.billingScheduleEveryMs)
})

test('an on-demand run goes through the queue and is measured: runs, items, duration', async () => {
  const t = await p.newTenant()
  await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '20', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', trial_period_days: 7 }],
  }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'EUR' }))
  const job = { job_name: 'subscription-trial-end' }
  const before = {
    runs: await metric(schedulerJobRuns, { ...job, outcome: 'success' }),
    items: await metric(schedulerJobItems, job),
    timed: await metric(schedulerJobSeconds, job, 'meterline_scheduler_job_duration_seconds_count'),
  }
  clock.set(new Date('2026-11-29T10:30:00Z'))
  assert.equal(await p.scheduler!.trigger('subscription-trial-end', { tenant_id: t.tenantId }), 1)
  assert.equal(await p.scheduler!.trigger('subscription-trial-end', { tenant_id: t.tenantId }), 0)
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.subscription_status, 'ACTIVE')
  assert.equal(await metric(schedulerJobRuns, { ...job, outcome: 'success' }), before.runs + 2)
  assert.equal(await metric(schedulerJobItems, job), before.items + 1)
  assert.equal(await metric(schedulerJobSeconds, job, 'meterline_scheduler_job_duration_seconds_count'), before.timed + 2)
  for (const name of ['subscription-scheduled-cancellation', 'auto-invoice-threshold']) {
    assert.equal(await p.scheduler!.trigger(name, { tenant_id: t.tenantId }), 0)
    assert.equal(await metric(schedulerJobRuns, { job_name: name, outcome: 'success' }) >= 1, true, name)
  }
})

test('a failing run is counted as a failure and rejects the trigger; an unknown name is refused', async () => {
  JOBS['test-failing-job'] = { everyMs: () => 60_000, run: async () => { throw new Error('boom') } }
  try {
    const failures = await metric(schedulerJobRuns, { job_name: 'test-failing-job', outcome: 'failure' })
    await assert.rejects(p.scheduler!.trigger('test-failing-job', {}), /boom/)
    assert.equal(await metric(schedulerJobRuns, { job_name: 'test-failing-job', outcome: 'failure' }), failures + 1)
  } finally {
    delete JOBS['test-failing-job']
  }
  await assert.rejects(p.scheduler!.trigger('no-such-job'), /unknown job no-such-job/)
})

test('the operators CLI (npm run job:run -- <name>) names every job in its usage', () => {
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/run-job.ts'], { cwd: PROJECT_ROOT, encoding: 'utf8' })
  assert.equal(res.status, 2, res.stderr)
  for (const name of Object.keys(JOBS)) assert.match(res.stderr, new RegExp(name))
})
