// Credit grant definitions: CRUD on plans and subscriptions, the plan read that includes them,
// validation of every term, and tenant + environment isolation.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { created } from '../../test/support/fixtures.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { assertError, countRows } from '../../test/support/assertions.js'

const p = usePlatform()

const monthly = { name: 'Monthly credits', credits: '500.25', period: 'MONTHLY' }

async function plan(api: ApiClient, name = 'Plan'): Promise<string> {
  const price = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }
  return (await created(api.post('/v1/plans', { name, prices: [price] }))).id
}

const ids = (items: { id: string }[]) => items.map((x) => x.id)

test('credit grant create, get, list by plan, update, archive; the plan read includes them', async () => {
  const { api, tenantId, environments, userId } = await p.newTenant()
  const planId = await plan(api)
  const otherPlanId = await plan(api, 'Other')
  const full = await created(api.post('/v1/creditgrants', {
    name: 'Welcome', plan_id: planId, credits: '1000', conversion_rate: '0.01', topup_conversion_rate: '0.012',
    credit_grant_anchor: '2026-02-01T00:00:00Z', start_date: '2026-02-01T00:00:00.000Z', end_date: '2027-02-01T00:00:00Z',
    expiration_duration: 30, expiration_duration_unit: 'DAY', period: 'BILLING_PERIOD', period_count: 2, priority: -1, metadata: { source: 'promo' },
  }))
  assert.match(full.id, /^cgrant_/)
  assert.deepEqual({ ...full, id: undefined, created_at: undefined, updated_at: undefined }, {
    id: undefined, created_at: undefined, updated_at: undefined, tenant_id: tenantId, environment_id: environments.production,
    status: 'published', metadata: { source: 'promo' }, created_by: userId, updated_by: userId,
    name: 'Welcome', plan_id: planId, subscription_id: null, credits: '1000', conversion_rate: '0.01', topup_conversion_rate: '0.012',
    credit_grant_anchor: '2026-02-01T00:00:00.000Z', start_date: '2026-02-01T00:00:00.000Z', end_date: '2027-02-01T00:00:00.000Z',
    expiration_duration: 30, expiration_duration_unit: 'DAY', period: 'BILLING_PERIOD', period_count: 2, priority: -1,
    cadence: 'RECURRING', scope: 'PLAN', expiration_type: null,
  })
  assert.deepEqual((await api.get(`/v1/creditgrants/${full.id}`)).body, full)
  const minimal = await created(api.post('/v1/creditgrants', { ...monthly, plan_id: planId, cadence: 'RECURRING', scope: 'PLAN' }))
  assert.deepEqual([minimal.cadence, minimal.scope], ['RECURRING', 'PLAN'])
  assert.deepEqual(
    [minimal.credits, minimal.period, minimal.period_count, minimal.priority, minimal.conversion_rate, minimal.expiration_duration, minimal.expiration_duration_unit, minimal.start_date],
    ['500.25', 'MONTHLY', 1, 0, null, null, null, null],
  )
  const elsewhere = await created(api.post('/v1/creditgrants', { ...monthly, name: 'Elsewhere', plan_id: otherPlanId, period: 'ONETIME' }))

  assert.deepEqual(ids((await api.get(`/v1/plans/${planId}`)).body.credit_grants), [full.id, minimal.id])
  assert.deepEqual((await api.get(`/v1/plans/${planId}`)).body.credit_grants[0], full)
  const byPlan = (await api.get(`/v1/creditgrants?plan_id=${planId}`)).body
  assert.deepEqual(ids(byPlan.items), [full.id, minimal.id])
  assert.deepEqual(byPlan.pagination, { limit: 50, offset: 0, total: 2 })
  assert.deepEqual((await api.get(`/v1/plans/${planId}/creditgrants`)).body, byPlan)
  assert.equal(elsewhere.cadence, 'ONETIME')
  assertError(await api.get('/v1/plans/plan_unknown/creditgrants'), 404, 'not_found')
  assert.deepEqual(ids((await api.get('/v1/creditgrants')).body.items), [full.id, minimal.id, elsewhere.id])
  const page = (await api.get('/v1/creditgrants?limit=2&offset=1')).body
  assert.deepEqual(ids(page.items), [minimal.id, elsewhere.id])
  assert.deepEqual(page.pagination, { limit: 2, offset: 1, total: 3 })
  assertError(await api.get('/v1/creditgrants?limit=0'), 400, 'validation_error', /limit/)

  const renamed = await api.put(`/v1/creditgrants/${minimal.id}`, { name: 'Renamed', metadata: { v: '2' } })
  assert.equal(renamed.status, 200, JSON.stringify(renamed.body))
  assert.deepEqual([renamed.body.name, renamed.body.metadata, renamed.body.credits], ['Renamed', { v: '2' }, '500.25'])
  assert.deepEqual((await api.get(`/v1/creditgrants/${minimal.id}`)).body, renamed.body)

  assert.equal((await api.delete(`/v1/creditgrants/${full.id}`)).status, 200)
  assert.equal((await api.get(`/v1/creditgrants/${full.id}`)).body.status, 'archived')
  assert.deepEqual(ids((await api.get(`/v1/plans/${planId}`)).body.credit_grants), [minimal.id])
  assert.deepEqual(ids((await api.get(`/v1/creditgrants?plan_id=${planId}`)).body.items), [minimal.id])
  assert.deepEqual(ids((await api.get(`/v1/creditgrants?plan_id=${planId}&status=archived`)).body.items), [full.id])
  assertError(await api.get('/v1/creditgrants/cgrant_unknown'), 404, 'not_found')
  assertError(await api.put('/v1/creditgrants/cgrant_unknown', { name: 'x' }), 404, 'not_found')
  assertError(await api.delete('/v1/creditgrants/cgrant_unknown'), 404, 'not_found')
})

test('a grant can belong to one subscription instead of a plan', async () => {
  const { api } = await p.newTenant()
  const planId = await plan(api)
  const customer = await created(api.post('/v1/customers', { external_id: 'grantee' }))
  const sub = await created(api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: planId, currency: 'USD' }))
  const grant = await created(api.post('/v1/creditgrants', { ...monthly, subscription_id: sub.id }))
  assert.deepEqual([grant.subscription_id, grant.plan_id], [sub.id, null])
  assert.deepEqual(ids((await api.get(`/v1/creditgrants?subscription_id=${sub.id}`)).body.items), [grant.id])
  assert.deepEqual((await api.get(`/v1/plans/${planId}`)).body.credit_grants, [])
})

test('every term is validated, naming the field, and nothing is written on rejection', async () => {
  const { api, tenantId } = await p.newTenant()
  const other = await p.newTenant()
  const planId = await plan(api)
  const archivedPlanId = await plan(api, 'Archived')
  await api.delete(`/v1/plans/${archivedPlanId}`)
  const foreignPlanId = await plan(other.api)
  const customer = await created(other.api.post('/v1/customers', { external_id: 'c' }))
  const foreignSub = await created(other.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: foreignPlanId, currency: 'USD' }))
  const grant = await created(api.post('/v1/creditgrants', { ...monthly, plan_id: planId }))
  const grants = await countRows(p, 'credit_grants', tenantId)
  const base = { ...monthly, plan_id: planId }
  const invalid: [object, RegExp][] = [
    [{ ...monthly }, /^exactly one of plan_id and subscription_id is required/],
    [{ ...base, subscription_id: foreignSub.id }, /^exactly one of plan_id and subscription_id is required/],
    [{ ...base, plan_id: foreignPlanId }, /^plan_id: plan .* not found/],
    [{ ...base, plan_id: archivedPlanId }, /^plan_id: plan .* not found/],
    [{ ...base, plan_id: 'plan_unknown' }, /^plan_id: plan .* not found/],
    [{ ...monthly, subscription_id: foreignSub.id }, /^subscription_id: subscription .* not found/],
    [{ ...base, credits: '0' }, /^credits must be greater than 0/],
    [{ ...base, credits: '-5' }, /credits must match pattern/],
    [{ ...base, credits: 5 }, /credits must be string/],
    [{ ...base, credits: undefined }, /credits/],
    [{ ...base, name: '' }, /name/],
    [{ ...base, conversion_rate: '0' }, /^conversion_rate must be greater than 0/],
    [{ ...base, topup_conversion_rate: '0.0' }, /^topup_conversion_rate must be greater than 0/],
    [{ ...base, expiration_duration: -1, expiration_duration_unit: 'DAY' }, /expiration_duration must be >= 0/],
    [{ ...base, expiration_duration: 1.5, expiration_duration_unit: 'DAY' }, /expiration_duration must be integer/],
    [{ ...base, expiration_duration: 30 }, /^expiration_duration and expiration_duration_unit go together/],
    [{ ...base, expiration_duration_unit: 'MONTH' }, /^expiration_duration and expiration_duration_unit go together/],
    [{ ...base, expiration_duration: 1, expiration_duration_unit: 'HOUR' }, /expiration_duration_unit must be equal to one of the allowed values/],
    [{ ...base, period: 'WEEKLY' }, /period must be equal to one of the allowed values/],
    [{ ...base, period: undefined }, /period/],
    [{ ...base, period_count: 0 }, /period_count must be >= 1/],
    [{ ...base, period: 'ONETIME', period_count: 2 }, /^period_count must be 1 for a ONETIME grant/],
    [{ ...base, priority: 1.5 }, /priority must be integer/],
    [{ ...base, start_date: '2026-03-01T00:00:00Z', end_date: '2026-03-01T00:00:00Z' }, /^end_date must be after start_date/],
    [{ ...base, start_date: 'tomorrow' }, /start_date must match format "date-time"/],
    [{ ...base, metadata: { n: 1 } }, /metadata\.n must be string/],
    [{ ...base, surprise: true }, /surprise/],
    [{ ...base, cadence: 'ONETIME' }, /^cadence: ONETIME contradicts period/],
    [{ ...base, period: 'ONETIME', cadence: 'RECURRING' }, /^cadence: RECURRING contradicts period ONETIME/],
    [{ ...base, cadence: 'WEEKLY' }, /cadence/],
    [{ ...base, scope: 'SUBSCRIPTION' }, /^scope: SUBSCRIPTION needs subscription_id/],
    [{ ...base, scope: 'ADDON' }, /scope/],
  ]
  for (const [body, message] of invalid) assertError(await api.post('/v1/creditgrants', body), 400, 'validation_error', message)
  // The terms are fixed once created.
  for (const body of [{ credits: '1' }, { period: 'ANNUAL' }, { plan_id: planId }, { priority: 3 }, { name: '' }]) {
    assertError(await api.put(`/v1/creditgrants/${grant.id}`, body), 400, 'validation_error')
  }
  assertError(await api.get('/v1/creditgrants?status=gone'), 400, 'validation_error', /status/)
  assert.equal(await countRows(p, 'credit_grants', tenantId), grants)
  assert.deepEqual((await api.get(`/v1/creditgrants/${grant.id}`)).body, grant)
})

test("tenants and environments never see each other's credit grants", async () => {
  const a = await p.newTenant()
  const b = await p.newTenant()
  const planId = await plan(a.api)
  const grant = await created(a.api.post('/v1/creditgrants', { ...monthly, plan_id: planId }))
  const sandbox = p.client(a.apiKey, a.environments.development)
  for (const client of [b.api, sandbox]) {
    assertError(await client.get(`/v1/creditgrants/${grant.id}`), 404, 'not_found')
    assertError(await client.put(`/v1/creditgrants/${grant.id}`, { name: 'hijacked' }), 404, 'not_found')
    assertError(await client.delete(`/v1/creditgrants/${grant.id}`), 404, 'not_found')
    assert.deepEqual((await client.get('/v1/creditgrants')).body.items, [])
    assert.deepEqual((await client.get(`/v1/creditgrants?plan_id=${planId}`)).body.items, [])
    assertError(await client.post('/v1/creditgrants', { ...monthly, plan_id: planId }), 400, 'validation_error', /^plan_id: plan .* not found/)
  }
  // A sandbox plan's grants stay in the sandbox.
  const sandboxPlan = await plan(sandbox)
  const sandboxGrant = await created(sandbox.post('/v1/creditgrants', { ...monthly, plan_id: sandboxPlan }))
  assert.deepEqual(ids((await sandbox.get(`/v1/plans/${sandboxPlan}`)).body.credit_grants), [sandboxGrant.id])
  assert.deepEqual(ids((await a.api.get('/v1/creditgrants')).body.items), [grant.id])
  assert.deepEqual((await a.api.get(`/v1/creditgrants/${grant.id}`)).body, grant)
})
