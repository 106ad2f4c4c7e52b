// A billing run longer than its job lock (SCHEDULER_LOCK_MS, 300 ms here). While its process
// renews the lock the run keeps it however long it takes; when the process cannot renew it (a
// blocked event loop, Redis lost), BullMQ takes the job as stalled and a second scheduler runs it
// again while the first attempt still holds a batch: every subscription is invoiced once, the
// numbers stay gapless and the figures (run record, job result) are what was committed.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../platform/clock.js'
import { createRedis } from '../platform/redis.js'
import { eventually, sqlOn, usePlatform } from '../test/support/platform.js'
import { created } from '../test/support/fixtures.js'
import { readBillingRun } from '../billing-api/billing/index.js'
import { finalizeDueInvoices } from '../billing-api/invoices/index.js'
import { startScheduler, type Scheduler } from './scheduler.js'

const OCT = new Date('2026-10-01T00:00:00Z')
const NOV = new Date('2026-11-01T00:00:00Z')
const LOCK_MS = 300
const clock = new ManualClock(OCT)
const p = usePlatform({
  services: ['billing-api'], clock,
  config: { billing: { batchSize: 2, runConcurrency: 1, waitForIngestion: false, watermarkGraceMs: 0, watermarkWaitMs: 0 } },
})
const sql = sqlOn(p)
const started: Scheduler[] = []
const connections: ReturnType<typeof createRedis>[] = []
const redis = () => {
  const r = createRedis(p.config.redisUrl)
  connections.push(r)
  return r
}
after(async () => {
  for (const s of started) await s.stop()
  for (const r of connections) await r.quit()
})

async function tenantWithSubscriptions(n: number) {
  clock.set(OCT)
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Fee', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '20.00', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
  }))
  const subs: string[] = []
  for (let i = 0; i < n; i++) {
    await created(t.api.post('/v1/customers', { external_id: `lock-${i}` }))
    subs.push((await created(t.api.post('/v1/subscriptions', { plan_id: plan.id, currency: 'USD', start_date: OCT.toISOString(), external_customer_id: `lock-${i}` }))).id)
  }
  clock.set(NOV)
  return { t, subs }
}

async function scheduler(prefix: string, seams?: Parameters<typeof startScheduler>[0]['seams']) {
  const s = await startScheduler({ ctx: { ...p.ctx, config: { ...p.ctx.config, schedulerLockMs: LOCK_MS } }, redis: redis(), prefix, schedule: false, seams })
  started.push(s)
  return s
}

async function billedOnce(tenantId: string, subs: string[]) {
  const rows = await sql(`SELECT subscription_id, count(*)::int AS n FROM invoices WHERE tenant_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE' GROUP BY subscription_id`, [tenantId])
  assert.deepEqual(rows.map((r) => [r.subscription_id, r.n]).sort(), subs.map((s) => [s, 1]).sort(), 'one cycle invoice per subscription')
  const moved = await sql(`SELECT count(*)::int AS n FROM subscriptions WHERE tenant_id = ? AND current_period_start = ?`, [tenantId, NOV])
  assert.equal(moved[0].n, subs.length, 'every period advanced')
}

async function gaplessNumbers(tenantId: string, expected: number) {
  clock.set(new Date('2026-11-01T02:00:01Z'))
  await finalizeDueInvoices(p.ctx, { tenantId })
  const numbers = (await sql(`SELECT invoice_number FROM invoices WHERE tenant_id = ? AND invoice_number IS NOT NULL ORDER BY invoice_number`, [tenantId])).map((r) => r.invoice_number)
  assert.deepEqual(numbers, Array.from({ length: expected }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`))
}

test('a run several lock durations long keeps its lock: one attempt, its result the invoices it wrote', async () => {
  const { t, subs } = await tenantWithSubscriptions(6)
  // every batch outlasts the lock (3 batches of 2, each held 2 lock durations after its commit)
  const s = await scheduler(`mltest-lock-a-${t.tenantId}`, { billingRun: { afterCommit: () => new Promise((r) => setTimeout(r, 2 * LOCK_MS)) } })
  const job = await s.queue.add('subscription-billing', { tenant_id: t.tenantId })
  assert.equal(await s.trigger('subscription-billing', { tenant_id: t.tenantId }, 60_000), 0, 'a second job finds nothing once the first is done')
  const first = await s.queue.getJob(job.id!)
  assert.equal(first?.returnvalue, 6)
  const run = await readBillingRun(p.ctx.orm.em.fork(), `subscription-billing:${job.id}:${job.timestamp}`)
  assert.deepEqual([run?.state, run?.attempts, run?.subscriptions, run?.invoices, run?.failures], ['completed', 1, 6, 6, 0])
  await billedOnce(t.tenantId, subs)
  await gaplessNumbers(t.tenantId, 12)
})

test('a run whose lock expired is run again by another scheduler while it still holds a batch: billed once, numbers gapless, figures true', async () => {
  const { t, subs } = await tenantWithSubscriptions(7)
  const prefix = `mltest-lock-b-${t.tenantId}`
  let jobId = ''
  // Scheduler A cannot renew its locks; its first batch waits, rows locked, until B has taken the job again.
  // (B's attempt then waits for that batch's commit: the batch also holds the run record's row.)
  const a = await scheduler(prefix, {
    skipLockRenewal: true,
    billingRun: {
      beforeCommit: async (batch) => {
        if (batch !== 1) return
        await eventually(async () => ((await a.queue.getJob(jobId))?.attemptsStarted === 2 ? true : undefined), 'the second attempt started')
      },
    },
  })
  const job = await a.queue.add('subscription-billing', { tenant_id: t.tenantId })
  jobId = job.id!
  const runId = `subscription-billing:${job.id}:${job.timestamp}`
  await eventually(async () => ((await readBillingRun(p.ctx.orm.em.fork(), runId))?.attempts === 1 ? true : undefined), 'A started the run')
  // Scheduler B starts only now, so A took the job: B gets it back when A's lock has expired.
  const b = await scheduler(prefix)
  await eventually(async () => ((await a.queue.getJob(job.id!))?.finishedOn ? true : undefined), 'the job finished', 60_000)
  const done = await b.queue.getJob(job.id!)
  assert.equal(await done?.getState(), 'completed')
  const run = await readBillingRun(p.ctx.orm.em.fork(), runId)
  // B's attempt waited for A's batch to commit before it closed the run: its result counts A's invoices too.
  await eventually(async () => ((await readBillingRun(p.ctx.orm.em.fork(), runId))?.state === 'completed' ? true : undefined), 'both attempts closed the run')
  assert.deepEqual([run?.attempts, run?.subscriptions, run?.invoices, run?.failures, run?.conflicts], [2, 7, 7, 0, 0])
  assert.equal(done?.returnvalue, 7)
  await billedOnce(t.tenantId, subs)
  await gaplessNumbers(t.tenantId, 14)
})
