// POST /invoices/{id}/compute: sync=true answers the recomputed invoice; without it a BullMQ job
// (worked by the scheduler process) recomputes it and GET /invoices/compute-jobs/{workflow_id}
// polls it, within the caller's tenant and environment only.
import {  test } from 'node:test'
import assert from 'node:assert/strict'
import { Queue } from 'bullmq'
import { ManualClock } from '../../platform/clock.js'
import { createRedis } from '../../platform/redis.js'
import { assertError } from '../../test/support/assertions.js'
import { eventually, usePlatform } from '../../test/support/platform.js'
import { INVOICE_COMPUTE_QUEUE } from './compute-job.js'
import { billedInvoices } from '../../test/support/invoices.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
const p = usePlatform({ services: ['billing-api', 'scheduler'], clock })

test('async compute: 202 with a workflow id, the job recomputes the invoice, the poll shows completed', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  const before = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.deepEqual([before.invoice_status, before.version, before.last_computed_at], ['DRAFT', 1, NOW.toISOString()])

  clock.set(new Date('2026-09-15T11:00:00Z'))
  const res = await t.api.post(`/v1/invoices/${id}/compute`, { version: 1 })
  assert.equal(res.status, 202, JSON.stringify(res.body))
  assert.deepEqual(Object.keys(res.body).sort(), ['invoice_id', 'status', 'workflow_id'])
  assert.equal(res.body.status, 'queued')
  assert.equal(res.body.invoice_id, id)
  const workflowId: string = res.body.workflow_id

  const done = await eventually(async () => {
    const poll = await t.api.get(`/v1/invoices/compute-jobs/${workflowId}`)
    assert.equal(poll.status, 200, JSON.stringify(poll.body))
    assert.ok(['queued', 'running', 'completed'].includes(poll.body.status), poll.body.status)
    return poll.body.status === 'completed' ? poll.body : undefined
  }, 'the compute job to complete')
  assert.deepEqual([done.workflow_id, done.invoice_id, done.attempts, done.error], [workflowId, id, 1, null])
  assert.ok(done.finished_at)

  const after = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.deepEqual([after.invoice_status, after.version, after.last_computed_at, after.total], ['DRAFT', 2, '2026-09-15T11:00:00.000Z', '25.00'])

  // Another tenant, and another environment of the same tenant, get 404 for the same id.
  const other = await p.newTenant()
  assertError(await other.api.get(`/v1/invoices/compute-jobs/${workflowId}`), 404, 'not_found')
  const development = p.client(t.apiKey, t.environments.development)
  assertError(await development.get(`/v1/invoices/compute-jobs/${workflowId}`), 404, 'not_found')
  assertError(await t.api.get('/v1/invoices/compute-jobs/invcompute_unknown'), 404, 'not_found')
})

async function jobCount(): Promise<number> {
  const redis = createRedis(p.config.redisUrl)
  const queue = new Queue(INVOICE_COMPUTE_QUEUE, { connection: redis, prefix: p.config.redisPrefix })
  try {
    return Object.values(await queue.getJobCounts()).reduce((a, n) => a + n, 0)
  } finally {
    await queue.close()
    await redis.quit()
  }
}

test('async compute refuses at once what the job could not do, and enqueues nothing', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  const jobs = await jobCount()
  assertError(await t.api.post(`/v1/invoices/${id}/compute`, { version: 7 }), 409, 'version_conflict')
  assertError(await t.api.post('/v1/invoices/inv_unknown/compute', {}), 404, 'not_found')
  assert.equal((await t.api.post(`/v1/invoices/${id}/finalize`, {})).status, 200)
  assertError(await t.api.post(`/v1/invoices/${id}/compute`, {}), 400, 'invalid_operation', /FINALIZED/)
  const other = await p.newTenant()
  assertError(await other.api.post(`/v1/invoices/${id}/compute`, {}), 404, 'not_found')
  assert.equal(await jobCount(), jobs)
})

test('a job whose invoice cannot be recomputed fails at once (no retries) and the poll shows the error', async () => {
  const t = await p.newTenant()
  const scope = { tenant_id: t.tenantId, environment_id: t.environments.production }
  const workflowId = await p.ctx.invoiceCompute!.enqueue({ ...scope, invoice_id: 'inv_gone' })
  const failed = await eventually(async () => {
    const poll = (await t.api.get(`/v1/invoices/compute-jobs/${workflowId}`)).body
    return poll.status === 'failed' ? poll : undefined
  }, 'the compute job to fail')
  assert.equal(failed.attempts, 1)
  assert.match(failed.error, /^not_found: invoice inv_gone not found/)
})

test('sync=true answers the recomputed invoice', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  clock.set(new Date('2026-09-15T12:00:00Z'))
  const res = await t.api.post(`/v1/invoices/${id}/compute?sync=true`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual([res.body.id, res.body.invoice_status, res.body.version, res.body.last_computed_at, res.body.total], [id, 'DRAFT', 2, '2026-09-15T12:00:00.000Z', '25.00'])
  assert.equal(res.body.line_items.length, 1)
})
