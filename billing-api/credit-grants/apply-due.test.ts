// The credit grant application job and the upcoming-grants read: the catch-up sequence, wallet
// top-ups (amounts, order, priority, expiry), idempotency under repeated and concurrent runs,
// and tenant isolation. Every run is limited to the test's tenant (the database is shared).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created } from '../../test/support/fixtures.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { assertError } from '../../test/support/assertions.js'
import { JOBS } from '../../scheduler/jobs.js'
import { applyDueCreditGrants } from './apply-due.js'
import { withSecondProcess } from '../../test/support/second-process.js'

const NOW = new Date('2026-11-20T00:00:00Z')
const clock = new ManualClock(NOW)
const p = usePlatform({ services: ['billing-api'], clock })

async function sql(query: string, params: unknown[] = []): Promise<any[]> {
  return p.ctx.orm.em.fork().getConnection().execute(query, params)
}

/** A USD monthly plan with one grant, and a customer subscribed since 2026-08-15 (three periods back). */
async function backdated(api: ApiClient, grant: object) {
  clock.set(NOW)
  const price = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }
  const plan = await created(api.post('/v1/plans', { name: 'Plan', prices: [price] }))
  const g = await created(api.post('/v1/creditgrants', { name: 'Monthly credits', credits: '100.5', period: 'MONTHLY', plan_id: plan.id, ...grant }))
  const customer = await created(api.post('/v1/customers', { external_id: `c-${Math.random()}` }))
  const sub = await created(api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: '2026-08-15T00:00:00Z' }))
  return { grant: g, customer, sub, planId: plan.id }
}

async function applications(subscriptionId: string) {
  return sql(
    `SELECT id, credit_grant_id, credits::text AS credits, period_start, period_end, scheduled_for, applied_at, application_status,
            failure_reason, retry_count, idempotency_key
       FROM credit_grant_applications WHERE subscription_id = ? ORDER BY scheduled_for`, [subscriptionId])
}

async function walletOf(api: ApiClient, customerId: string) {
  const wallets = (await api.get(`/v1/wallets?customer_id=${customerId}`)).body.items
  assert.equal(wallets.length, 1)
  return wallets[0]
}

async function credits(walletId: string) {
  return sql(
    `SELECT credit_amount::text AS credits, transaction_reason, priority, expiry_date, idempotency_key
       FROM wallet_transactions WHERE wallet_id = ? AND type = 'credit' ORDER BY created_at, id`, [walletId])
}

const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null)
const STARTS = ['2026-08-15T00:00:00.000Z', '2026-09-15T00:00:00.000Z', '2026-10-15T00:00:00.000Z', '2026-11-15T00:00:00.000Z']

test('catch-up: a subscription backdated three periods gets the three missed and the current application, in order', async () => {
  const { api, tenantId } = await p.newTenant()
  const { grant, customer, sub } = await backdated(api, { priority: 2 })
  const result = await applyDueCreditGrants(p.ctx, { tenantId })
  assert.deepEqual(result, { subscriptions: 1, applied: 4, failed: 0, skipped: 0 })

  const rows = await applications(sub.id)
  assert.deepEqual(rows.map((r) => [iso(r.period_start), iso(r.period_end), iso(r.scheduled_for)]), [
    [STARTS[0], STARTS[1], STARTS[0]], [STARTS[1], STARTS[2], STARTS[1]], [STARTS[2], STARTS[3], STARTS[2]],
    [STARTS[3], '2026-12-15T00:00:00.000Z', STARTS[3]],
  ])
  for (const r of rows) {
    assert.deepEqual(
      [r.credit_grant_id, r.credits, r.application_status, iso(r.applied_at), r.failure_reason, r.retry_count],
      [grant.id, '100.5', 'APPLIED', NOW.toISOString(), null, 0],
    )
    assert.equal(r.idempotency_key, `${grant.id}:${sub.id}:${iso(r.period_start)}`)
    assert.match(r.id, /^cgapp_/)
  }
  // The customer had no wallet: a PREPAID USD one was created and credited 4 x 100.5, in period order.
  const wallet = await walletOf(api, customer.id)
  assert.deepEqual([wallet.currency, wallet.wallet_type, wallet.balance], ['USD', 'PREPAID', '402'])
  assert.deepEqual((await credits(wallet.id)).map((c) => [c.credits, c.transaction_reason, c.priority, c.expiry_date, c.idempotency_key]),
    rows.map((r) => ['100.5', 'FREE_CREDIT', 2, null, r.idempotency_key]))
})

test('a second run and two concurrent runs credit nothing more; a lost status update is not credited twice', async () => {
  const { api, tenantId } = await p.newTenant()
  const { customer, sub } = await backdated(api, {})
  await withSecondProcess(p, async (ctxB) => {
    const [a, b] = await Promise.all([applyDueCreditGrants(p.ctx, { tenantId }), applyDueCreditGrants(ctxB, { tenantId })])
    assert.equal(a.applied + b.applied, 4, JSON.stringify([a, b]))
    const [c, d] = await Promise.all([applyDueCreditGrants(p.ctx, { tenantId }), applyDueCreditGrants(ctxB, { tenantId })])
    assert.equal(c.applied + d.applied, 0)
  })
  assert.equal(await JOBS['credit-grant-application'].run(p.ctx, { tenant_id: tenantId }), 0)
  assert.equal(JOBS['credit-grant-application'].everyMs(p.ctx), 15 * 60_000)
  const wallet = await walletOf(api, customer.id)
  assert.equal(wallet.balance, '402')
  assert.equal((await credits(wallet.id)).length, 4)

  // The wallet was credited but the application's status update was lost: the retry finds the
  // key used on the wallet and marks it APPLIED without a second credit.
  const [last] = (await applications(sub.id)).slice(-1)
  await sql(`UPDATE credit_grant_applications SET application_status = 'PENDING', applied_at = NULL WHERE id = ?`, [last.id])
  assert.equal((await applyDueCreditGrants(p.ctx, { tenantId })).applied, 1)
  assert.deepEqual((await applications(sub.id)).map((r) => r.application_status), ['APPLIED', 'APPLIED', 'APPLIED', 'APPLIED'])
  assert.equal((await walletOf(api, customer.id)).balance, '402')

  // The next period falls due a month later: exactly one more application.
  clock.set(new Date('2026-12-15T00:00:00Z'))
  assert.equal((await applyDueCreditGrants(p.ctx, { tenantId })).applied, 1)
  assert.equal((await walletOf(api, customer.id)).balance, '502.5')
  clock.set(NOW)
})

test('expiry counts from period_start; periods whose credits already expired are SKIPPED; an existing wallet is used', async () => {
  const { api, tenantId } = await p.newTenant()
  const { customer, sub } = await backdated(api, { expiration_duration: 2, expiration_duration_unit: 'MONTH', priority: -1 })
  const existing = await created(api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD', wallet_type: 'POSTPAID' }), 200)
  assert.deepEqual(await applyDueCreditGrants(p.ctx, { tenantId }), { subscriptions: 1, applied: 2, failed: 0, skipped: 2 })
  const rows = await applications(sub.id)
  assert.deepEqual(rows.map((r) => r.application_status), ['SKIPPED', 'SKIPPED', 'APPLIED', 'APPLIED'])
  assert.match(rows[0].failure_reason, /expired at 2026-10-15T00:00:00.000Z/)
  assert.match(rows[1].failure_reason, /expired at 2026-11-15T00:00:00.000Z/)
  assert.deepEqual([rows[0].applied_at, rows[0].retry_count], [null, 0])
  assert.equal((await walletOf(api, customer.id)).id, existing.id)
  assert.deepEqual((await credits(existing.id)).map((c) => [c.credits, c.priority, iso(c.expiry_date), c.idempotency_key]), [
    ['100.5', -1, '2026-12-15T00:00:00.000Z', rows[2].idempotency_key],
    ['100.5', -1, '2027-01-15T00:00:00.000Z', rows[3].idempotency_key],
  ])
  assert.equal((await walletOf(api, customer.id)).balance, '201')
  // Skipped periods stay skipped.
  assert.deepEqual(await applyDueCreditGrants(p.ctx, { tenantId }), { subscriptions: 1, applied: 0, failed: 0, skipped: 0 })
})

test('GET /subscriptions/{id}/grants/upcoming lists pending and computed applications; other tenants get 404', async () => {
  const a = await p.newTenant()
  const { grant, sub } = await backdated(a.api, {})
  const once = await created(a.api.post('/v1/creditgrants', { name: 'Welcome', credits: '7', period: 'ONETIME', subscription_id: sub.id }))
  const upcoming = () => a.api.get(`/v1/subscriptions/${sub.id}/grants/upcoming`)

  // Before the job: the four due periods and the next three, plus the one-time grant, all computed (id null).
  const before = await upcoming()
  assert.equal(before.status, 200, JSON.stringify(before.body))
  assert.deepEqual(before.body.pagination, { limit: 50, offset: 0, total: 8 })
  assert.deepEqual(before.body.items.map((x: any) => [x.credit_grant_id, x.period_start, x.id, x.application_status]), [
    [grant.id, STARTS[0], null, 'PENDING'], [once.id, STARTS[0], null, 'PENDING'], [grant.id, STARTS[1], null, 'PENDING'],
    [grant.id, STARTS[2], null, 'PENDING'], [grant.id, STARTS[3], null, 'PENDING'], [grant.id, '2026-12-15T00:00:00.000Z', null, 'PENDING'],
    [grant.id, '2027-01-15T00:00:00.000Z', null, 'PENDING'], [grant.id, '2027-02-15T00:00:00.000Z', null, 'PENDING'],
  ])
  assert.deepEqual(before.body.items[5], {
    id: null, tenant_id: a.tenantId, environment_id: a.environments.production, credit_grant_id: grant.id, subscription_id: sub.id,
    credits: '100.5', scheduled_for: '2026-12-15T00:00:00.000Z', applied_at: null, period_start: '2026-12-15T00:00:00.000Z',
    period_end: '2027-01-15T00:00:00.000Z', application_status: 'PENDING', failure_reason: null, retry_count: 0,
    idempotency_key: `${grant.id}:${sub.id}:2026-12-15T00:00:00.000Z`, status: 'published', metadata: {},
    created_at: null, updated_at: null, created_by: null, updated_by: null, application_reason: null, subscription_status_at_application: null,
  })
  assert.equal(before.body.items[1].period_end, null)
  // per customer: the same over its subscriptions
  assert.deepEqual((await a.api.get(`/v1/customers/${sub.customer_id}/grants/upcoming`)).body, before.body)

  // After the job only the future ones remain; a stored PENDING application is listed with its id.
  assert.equal((await applyDueCreditGrants(p.ctx, { tenantId: a.tenantId })).applied, 5)
  const [stored] = await sql(`SELECT id FROM credit_grant_applications WHERE subscription_id = ? AND period_start = ? AND credit_grant_id = ?`, [sub.id, STARTS[3], grant.id])
  await sql(`UPDATE credit_grant_applications SET application_status = 'PENDING', applied_at = NULL WHERE id = ?`, [stored.id])
  const afterRun = (await upcoming()).body
  assert.deepEqual(afterRun.items.map((x: any) => [x.period_start, x.id]), [
    [STARTS[3], stored.id], ['2026-12-15T00:00:00.000Z', null], ['2027-01-15T00:00:00.000Z', null], ['2027-02-15T00:00:00.000Z', null],
  ])
  assert.equal(afterRun.items[0].created_by, 'system:credit-grant-application')
  const page = (await a.api.get(`/v1/subscriptions/${sub.id}/grants/upcoming?limit=2&offset=1`)).body
  assert.deepEqual(page.items.map((x: any) => x.period_start), ['2026-12-15T00:00:00.000Z', '2027-01-15T00:00:00.000Z'])
  assert.deepEqual(page.pagination, { limit: 2, offset: 1, total: 4 })
  assertError(await a.api.get(`/v1/subscriptions/${sub.id}/grants/upcoming?limit=0`), 400, 'validation_error', /limit/)

  // Another tenant, and the same tenant's sandbox, see nothing; a run for another tenant applies nothing here.
  const b = await p.newTenant()
  for (const client of [b.api, p.client(a.apiKey, a.environments.development)]) {
    assertError(await client.get(`/v1/subscriptions/${sub.id}/grants/upcoming`), 404, 'not_found')
  }
  assertError(await a.api.get('/v1/subscriptions/subs_unknown/grants/upcoming'), 404, 'not_found')
  assertError(await b.api.get(`/v1/customers/${sub.customer_id}/grants/upcoming`), 404, 'not_found')
  assert.deepEqual(await applyDueCreditGrants(p.ctx, { tenantId: b.tenantId }), { subscriptions: 0, applied: 0, failed: 0, skipped: 0 })
  assert.equal((await applications(sub.id)).filter((r) => r.application_status === 'PENDING').length, 1)
})
