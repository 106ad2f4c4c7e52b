// Redis stopped under the running platform (issue #13, item 4): calls that need it (invoice
// compute jobs) answer 503 service_unavailable within 2 s and change nothing, calls that do not
// need it keep working, and after Redis restarts jobs are enqueued and worked again without a
// platform restart. A private redis-server on a free port, so other test files keep theirs.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { billedInvoices } from '../support/invoices.js'
import { assertError } from '../support/assertions.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { startPrivateRedis, type PrivateRedis } from '../support/private-services.js'

const clock = new ManualClock(new Date('2026-09-15T10:00:00Z'))
let redis: PrivateRedis
let p: TestPlatform
before(async () => {
  redis = await startPrivateRedis()
  p = await startTestPlatform({ services: ['billing-api', 'scheduler'], clock, config: { redisUrl: redis.url } })
})
after(async () => {
  await p?.stop()
  await redis?.stop()
})

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = Date.now()
  const result = await work()
  return [result, Date.now() - started]
}

test('Redis down: job calls answer 503 within 2 s and write nothing; jobs run again after Redis returns', async () => {
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  const before = (await t.api.get(`/v1/invoices/${id}`)).body
  const first = await t.api.post(`/v1/invoices/${id}/compute`, {})
  assert.equal(first.status, 202, JSON.stringify(first.body))

  await redis.stop()
  const times: Record<string, number> = {}
  const [enqueue, enqueueMs] = await timed(() => t.api.post(`/v1/invoices/${id}/compute`, {}))
  assertError(enqueue, 503, 'service_unavailable', /job queue \(Redis\) is unavailable/)
  times['POST /v1/invoices/{id}/compute'] = enqueueMs
  const [poll, pollMs] = await timed(() => t.api.get(`/v1/invoices/compute-jobs/${first.body.workflow_id}`))
  assertError(poll, 503, 'service_unavailable')
  times['GET /v1/invoices/compute-jobs/{id}'] = pollMs
  for (const [name, ms] of Object.entries(times)) assert.ok(ms < 2000, `${name} answered 503 in ${ms} ms`)
  // What does not need Redis keeps working, and the refused call changed nothing.
  const during = await t.api.get(`/v1/invoices/${id}`)
  assert.equal(during.status, 200)
  assert.ok(during.body.version >= before.version)

  await redis.start()
  const restartedAt = Date.now()
  // The enqueueing connection reconnects by itself; a new job is accepted and worked.
  const accepted = await eventually(async () => {
    const res = await t.api.post(`/v1/invoices/${id}/compute`, {})
    return res.status === 202 ? res.body : undefined
  }, 'the compute queue to accept jobs again', 20_000)
  const queueBackMs = Date.now() - restartedAt
  clock.set(new Date('2026-09-15T11:00:00Z'))
  const done = await eventually(async () => {
    const res = await t.api.get(`/v1/invoices/compute-jobs/${accepted.workflow_id}`)
    return res.status === 200 && res.body.status === 'completed' ? res.body : undefined
  }, 'the job to be worked after the restart', 30_000)
  const jobDoneMs = Date.now() - restartedAt
  assert.equal(done.error, null)
  console.log(`# redis-down figures: time to 503 per call (ms) ${JSON.stringify(times)}; queue accepting ${queueBackMs} ms and a job completed ${jobDoneMs} ms after redis-server restart`)
})
