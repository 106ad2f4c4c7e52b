// The operators' API against the real platform (Postgres, Redis/BullMQ, the scheduler's worker):
// its own credential, jobs run on demand and followed to completion, failures shown and retried,
// tenants created with a working key.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { ManualClock } from '../../platform/clock.js'
import { createHttpServer } from '../../platform/http.js'
import { JOB_CATALOGUE } from '../../platform/job-catalogue.js'
import { JOBS } from '../../scheduler/jobs.js'
import { assertError } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { ApiClient, eventually, sqlOn, usePlatform } from '../../test/support/platform.js'
import { adminRoutes } from './routes.js'

const TOKEN = randomBytes(24).toString('hex')
const clock = new ManualClock(new Date('2026-11-22T10:30:00Z'))
const p = usePlatform({ services: ['billing-api', 'scheduler'], clock, config: { adminToken: TOKEN } })
const admin = () => new ApiClient(p.url, undefined, undefined)
const asAdmin = (method: string, path: string, body?: unknown, token = TOKEN) =>
  admin().request(method, `/v1/admin${path}`, body, { authorization: `Bearer ${token}` })

async function finished(queue: string, id: string) {
  return eventually(async () => {
    const res = await asAdmin('GET', `/queues/${queue}/jobs/${id}`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body.state === 'completed' || res.body.state === 'failed' ? res.body : undefined
  }, `${queue} job ${id} to finish`)
}

test('no token, a wrong token or a tenant API key: 401 ErrorResponse on every admin route', async () => {
  const t = await p.newTenant('Key holder')
  const routes: [string, string, unknown?][] = [
    ['GET', '/jobs'], ['POST', '/jobs/subscription-billing/runs', {}], ['GET', '/queues'], ['GET', '/queues/scheduler'],
    ['GET', '/queues/scheduler/jobs/1'], ['POST', '/queues/scheduler/jobs/1/retry', {}], ['POST', '/queues/scheduler/retry-failed', {}],
    ['POST', '/tenants', { name: 'Intruder' }],
  ]
  for (const [method, path, body] of routes) {
    assertError(await admin().request(method, `/v1/admin${path}`, body), 401, 'permission_denied', /missing admin token/)
    assertError(await asAdmin(method, path, body, `${TOKEN.slice(0, -1)}x`), 401, 'permission_denied', /invalid admin token/)
    // another tenant's super_admin key, as the tenant API takes it and as a bearer token
    assertError(await t.api.request(method, `/v1/admin${path}`, body), 401, 'permission_denied')
    assertError(await asAdmin(method, path, body, t.apiKey), 401, 'permission_denied', /invalid admin token/)
  }
  assertError(await admin().request('GET', '/v1/admin/jobs', undefined, { authorization: `Basic ${TOKEN}` }), 401, 'permission_denied', /missing/)
  const [{ n }] = await sqlOn(p)(`SELECT count(*)::int AS n FROM tenants WHERE name = 'Intruder'`)
  assert.equal(n, 0, 'a refused tenant creation wrote nothing')
  // and the admin token is no tenant API key
  assertError(await new ApiClient(p.url, TOKEN).get(`/v1/tenants/${t.tenantId}`), 401, 'permission_denied')
})

test('without ADMIN_TOKEN the admin API is off: 404 ErrorResponse', async () => {
  const app = createHttpServer({ service: 'admin-off', logLevel: 'fatal' })
  await app.register(async (s) => adminRoutes(s, { ...p.ctx, config: { ...p.config, adminToken: undefined } }), { prefix: '/v1/admin' })
  try {
    for (const auth of [undefined, `Bearer ${TOKEN}`]) {
      const res = await app.inject({ method: 'GET', url: '/v1/admin/jobs', headers: auth ? { authorization: auth } : {} })
      assertError({ status: res.statusCode, body: res.json() }, 404, 'not_found', /admin API is disabled: set ADMIN_TOKEN/)
    }
  } finally {
    await app.close()
  }
})

test('the recurring jobs are listed with their cadence', async () => {
  const res = await asAdmin('GET', '/jobs')
  assert.equal(res.status, 200)
  const byName = Object.fromEntries(res.body.items.map((j: { name: string }) => [j.name, j]))
  assert.deepEqual(Object.keys(byName).sort(), Object.keys(JOB_CATALOGUE).sort())
  assert.deepEqual(byName['subscription-trial-end'], { name: 'subscription-trial-end', every_ms: 60_000, next_run_at: null })
  assert.equal(byName['wallet-credit-expiry'].every_ms, 15 * 60_000)
  assert.equal(byName['subscription-billing'].every_ms, p.config.billingScheduleEveryMs)
})

test('a job triggered now runs in the scheduler and shows completed with its item count', async () => {
  const t = await p.newTenant()
  await created(t.api.post('/v1/customers', { external_id: 'c' }))
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '20', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', trial_period_days: 7 }],
  }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'c', plan_id: plan.id, currency: 'EUR' }))
  clock.set(new Date('2026-11-29T10:30:00Z')) // the 7-day trial has ended

  const before = (await asAdmin('GET', '/queues/scheduler')).body.counts
  const run = await asAdmin('POST', '/jobs/subscription-trial-end/runs', { tenant_id: t.tenantId })
  assert.equal(run.status, 202, JSON.stringify(run.body))
  assert.equal(run.body.queue, 'scheduler')
  assert.equal(run.body.name, 'subscription-trial-end')
  assert.deepEqual(run.body.data, { tenant_id: t.tenantId })
  const done = await finished('scheduler', run.body.id)
  assert.equal(done.state, 'completed')
  assert.equal(done.return_value, 1, 'one trial ended')
  assert.equal(done.failed_reason, null)
  assert.ok(done.finished_at >= done.created_at)
  assert.equal((await t.api.get(`/v1/subscriptions/${sub.id}`)).body.subscription_status, 'ACTIVE')

  const status = await asAdmin('GET', '/queues/scheduler')
  assert.equal(status.status, 200)
  assert.equal(status.body.counts.completed, before.completed + 1)
  assert.equal(status.body.counts.failed, before.failed)
  const all = await asAdmin('GET', '/queues?failures=0')
  assert.deepEqual(all.body.items.map((q: { queue: string }) => q.queue), ['scheduler', 'webhook-delivery', 'invoice-compute', 'integration-sync', 'environment-clone'])
  assert.deepEqual(all.body.items[0].counts, status.body.counts)

  assertError(await asAdmin('POST', '/jobs/no-such-job/runs', {}), 404, 'not_found', /job no-such-job/)
  assertError(await asAdmin('GET', '/queues/scheduler/jobs/999999'), 404, 'not_found')
  assertError(await asAdmin('GET', '/queues/no-queue'), 400, 'validation_error')
  assertError(await asAdmin('POST', `/queues/scheduler/jobs/${run.body.id}/retry`, {}), 400, 'invalid_operation', /is completed; only failed jobs/)
})

test('a failing job shows in the failures with its reason and is retried: one by id, then all of a queue', async () => {
  let fail = true
  let runs = 0
  JOB_CATALOGUE['test-admin-flaky'] = { everyMs: () => 60_000 }
  JOBS['test-admin-flaky'] = {
    everyMs: () => 60_000,
    run: async () => {
      runs++
      if (fail) throw new Error('ledger locked by another run')
      return 7
    },
  }
  try {
    const before = (await asAdmin('GET', '/queues/scheduler')).body.counts
    const run = await asAdmin('POST', '/jobs/test-admin-flaky/runs', {})
    assert.equal(run.status, 202)
    const failed = await finished('scheduler', run.body.id)
    assert.equal(failed.state, 'failed')
    assert.equal(failed.failed_reason, 'ledger locked by another run')
    assert.equal(failed.attempts_made, 1)

    const status = (await asAdmin('GET', '/queues/scheduler?failures=5')).body
    assert.equal(status.counts.failed, before.failed + 1)
    assert.deepEqual(
      { id: status.recent_failures[0].id, name: status.recent_failures[0].name, reason: status.recent_failures[0].failed_reason },
      { id: run.body.id, name: 'test-admin-flaky', reason: 'ledger locked by another run' },
    )

    fail = false
    const retried = await asAdmin('POST', `/queues/scheduler/jobs/${run.body.id}/retry`, {})
    assert.equal(retried.status, 200, JSON.stringify(retried.body))
    const ok = await finished('scheduler', run.body.id)
    assert.deepEqual([ok.state, ok.return_value, ok.failed_reason], ['completed', 7, null])
    assert.equal(runs, 2)
    assert.equal((await asAdmin('GET', '/queues/scheduler')).body.counts.failed, before.failed)

    // two more failures, then every failed job of the queue at once
    fail = true
    const ids = [(await asAdmin('POST', '/jobs/test-admin-flaky/runs', {})).body.id, (await asAdmin('POST', '/jobs/test-admin-flaky/runs', {})).body.id]
    for (const id of ids) assert.equal((await finished('scheduler', id)).state, 'failed')
    assert.equal((await asAdmin('GET', '/queues/scheduler')).body.counts.failed, before.failed + 2)
    fail = false
    const all = await asAdmin('POST', '/queues/scheduler/retry-failed', {})
    assert.deepEqual(all.body, { queue: 'scheduler', retried: before.failed + 2 })
    for (const id of ids) assert.deepEqual((await finished('scheduler', id)).return_value, 7)
    assert.equal(runs, 6, '1 failed + 1 retried + 2 failed + 2 retried')
    assert.equal((await asAdmin('GET', '/queues/scheduler')).body.counts.failed, 0)
    assert.deepEqual((await asAdmin('POST', '/queues/scheduler/retry-failed', {})).body, { queue: 'scheduler', retried: 0 })
  } finally {
    delete JOBS['test-admin-flaky']
    delete JOB_CATALOGUE['test-admin-flaky']
  }
})

test('a tenant created through the admin API has both environments and a working API key', async () => {
  const res = await asAdmin('POST', '/tenants', { name: 'Admin-made Ltd', key_environment: 'development' })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.deepEqual(Object.keys(res.body).sort(), ['api_key', 'environments', 'tenant_id', 'user_id'])
  const api = new ApiClient(p.url, res.body.api_key)
  const tenant = await api.get(`/v1/tenants/${res.body.tenant_id}`)
  assert.equal(tenant.status, 200)
  assert.equal(tenant.body.name, 'Admin-made Ltd')
  const envs = (await api.get('/v1/environments')).body.items
  assert.deepEqual(
    envs.map((e: { id: string; type: string }) => [e.type, e.id]).sort(),
    [['development', res.body.environments.development], ['production', res.body.environments.production]],
  )
  // the key is bound to the development environment: what it creates lands there
  const customer = await created(api.post('/v1/customers', { external_id: 'first' }))
  const [row] = await sqlOn(p)('SELECT environment_id FROM customers WHERE id = ?', [customer.id])
  assert.equal(row.environment_id, res.body.environments.development)

  assertError(await asAdmin('POST', '/tenants', {}), 400, 'validation_error', /name/)
  assertError(await asAdmin('POST', '/tenants', { name: 'x', key_environment: 'staging' }), 400, 'validation_error')
})

test('the admin routes are in the OpenAPI document with the admin bearer scheme', async () => {
  const doc = (await p.client().get('/v1/docs/openapi.json')).body
  assert.deepEqual(doc.components.securitySchemes.adminToken, { type: 'http', scheme: 'bearer' })
  const expected: [string, string][] = [
    ['get', '/v1/admin/jobs'], ['post', '/v1/admin/jobs/{name}/runs'], ['get', '/v1/admin/queues'], ['get', '/v1/admin/queues/{queue}'],
    ['get', '/v1/admin/queues/{queue}/jobs/{id}'], ['post', '/v1/admin/queues/{queue}/jobs/{id}/retry'],
    ['post', '/v1/admin/queues/{queue}/retry-failed'], ['post', '/v1/admin/tenants'],
  ]
  for (const [method, path] of expected) {
    const op = doc.paths[path]?.[method]
    assert.ok(op, `${method.toUpperCase()} ${path} is documented`)
    assert.deepEqual(op.security, [{ adminToken: [] }], path)
  }
  assert.deepEqual(doc.paths['/v1/admin/tenants'].post.requestBody.content['application/json'].schema.required, ['name'])
})

test('a billing run triggered through the admin API has one progress record: done / total, invoices, failures, rate', async () => {
  const t = await p.newTenant('Billed')
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Seat', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '5', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }],
  }))
  for (let i = 0; i < 3; i++) {
    const c = await created(t.api.post('/v1/customers', { external_id: `run-${i}` }))
    await created(t.api.post('/v1/subscriptions', { customer_id: c.id, plan_id: plan.id, currency: 'EUR', start_date: '2026-10-01T00:00:00Z' }))
  }
  const queued = await asAdmin('POST', '/jobs/subscription-billing/runs', { tenant_id: t.tenantId })
  assert.equal(queued.status, 202)
  const done = await finished('scheduler', queued.body.id)
  assert.equal(done.return_value, 3)
  const run = await asAdmin('GET', `/billing-runs/subscription-billing:${queued.body.id}:${Date.parse(queued.body.created_at)}`)
  assert.equal(run.status, 200, JSON.stringify(run.body))
  assert.deepEqual(
    [run.body.state, run.body.tenant_id, run.body.total, run.body.subscriptions, run.body.invoices, run.body.failures, run.body.eta_seconds],
    ['completed', t.tenantId, 3, 3, 3, 0, 0],
  )
  assert.ok(run.body.rate > 0)
  assert.equal((await asAdmin('GET', '/billing-runs?limit=1')).body.items[0].id, `subscription-billing:${queued.body.id}:${Date.parse(queued.body.created_at)}`)
  assertError(await asAdmin('GET', '/billing-runs/subscription-billing:nope'), 404, 'not_found', /billing run/)
})
