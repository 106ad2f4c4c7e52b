// Environment clone: published features, then plans with their prices and entitlements, copied
// to another environment of the tenant with every reference remapped, as a polled BullMQ job;
// repeated, retried after a failure, or run twice at once, it copies nothing twice.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { assertError } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { eventually, sqlOn, usePlatform, type ApiClient } from '../../test/support/platform.js'
import { flatMonthly, newFeature, newMeter, usagePrice } from '../features/test-kit.js'
import { runEnvironmentClone, type CloneProgress } from './run-clone.js'

const p = usePlatform({ services: ['billing-api', 'scheduler'] })
const sql = () => sqlOn(p)

/** Rows per catalog table in one environment. */
async function catalogRows(environmentId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const table of ['meters', 'pricing_units', 'features', 'plans', 'prices', 'entitlements']) {
    const [row] = await sql()(`SELECT count(*)::int AS n FROM ${table} WHERE environment_id = ?`, [environmentId])
    out[table] = row.n
  }
  return out
}

/**
 * Production: 2 meters (one unused), a pricing unit, features api_calls (metered), sso, old
 * (archived), a published plan "pro" (3 prices, 3 entitlements, one to the archived feature)
 * and an archived plan.
 */
async function sourceCatalog(api: ApiClient) {
  const meter = await newMeter(api, 'api_call')
  await newMeter(api, 'unused')
  const unit = await created(api.post('/v1/pricing-units', { name: 'Credits', code: 'CRD', base_currency: 'USD', conversion_rate: '0.01' }))
  const calls = await newFeature(api, { name: 'API calls', type: 'metered', lookup_key: 'api_calls', meter_id: meter.id })
  const sso = await newFeature(api, { name: 'SSO', type: 'boolean', lookup_key: 'sso' })
  const old = await newFeature(api, { name: 'Old', type: 'boolean', lookup_key: 'old' })
  const plan = await created(api.post('/v1/plans', {
    name: 'Pro', lookup_key: 'pro',
    prices: [
      flatMonthly('49'),
      { ...usagePrice(meter.id, '0.01'), lookup_key: 'pro_calls' },
      { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', price_unit_id: unit.id, price_unit_amount: '500', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' },
    ],
  }))
  for (const body of [
    { feature_id: calls.id, usage_limit: 1000, usage_reset_period: 'MONTHLY' },
    { feature_id: sso.id },
    { feature_id: old.id },
  ]) await created(api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, ...body }))
  assert.equal((await api.delete(`/v1/features/${old.id}`)).status, 200)
  const archived = await created(api.post('/v1/plans', { name: 'Legacy', prices: [flatMonthly('9')] }))
  assert.equal((await api.delete(`/v1/plans/${archived.id}`)).status, 200)
  return { meter, unit, calls, sso, plan }
}

async function cloneAndWait(api: ApiClient, target: string): Promise<{ job_id: string; progress: CloneProgress }> {
  const start = await api.post('/v1/environments/clone', { target_environment_id: target })
  assert.equal(start.status, 202, JSON.stringify(start.body))
  assert.ok(['queued', 'running', 'completed'].includes(start.body.status))
  return eventually(async () => {
    const poll = await api.get(`/v1/environments/clone-jobs/${start.body.job_id}`)
    assert.equal(poll.status, 200, JSON.stringify(poll.body))
    assert.notEqual(poll.body.status, 'failed', poll.body.error)
    return poll.body.status === 'completed' ? poll.body : undefined
  }, 'the clone job to complete')
}

test('clones published features, then plans with prices and entitlements, remapping ids; a second run copies nothing', async () => {
  const t = await p.newTenant()
  const { production, development } = t.environments
  const dev = p.client(t.apiKey, development)
  const src = await sourceCatalog(t.api)
  // the target already has a feature with lookup key sso: it stands in for the source's
  const devSso = await newFeature(dev, { name: 'SSO (dev)', type: 'boolean', lookup_key: 'sso' })

  const first = await cloneAndWait(t.api, development)
  assert.deepEqual(first.progress, {
    phase: 'done', done: 5, total: 5, existing: 1, warnings: [],
    created: { meters: 1, pricing_units: 1, features: 1, plans: 1, prices: 3, entitlements: 2 },
  })
  assert.deepEqual(await catalogRows(development), { meters: 1, pricing_units: 1, features: 2, plans: 1, prices: 3, entitlements: 2 })

  const features = (await dev.get('/v1/features')).body.items
  assert.deepEqual(features.map((f: { lookup_key: string }) => f.lookup_key).sort(), ['api_calls', 'sso'])
  const calls = features.find((f: { lookup_key: string }) => f.lookup_key === 'api_calls')
  assert.notEqual(calls.id, src.calls.id)
  assert.notEqual(calls.meter_id, src.meter.id)
  const meter = (await dev.get(`/v1/meters/${calls.meter_id}`)).body
  assert.deepEqual([meter.environment_id, meter.event_name, meter.aggregation.type], [development, 'api_call', 'COUNT'])

  const plans = (await dev.get('/v1/plans')).body.items
  assert.equal(plans.length, 1)
  const plan = (await dev.get(`/v1/plans/${plans[0].id}`)).body
  assert.notEqual(plan.id, src.plan.id)
  assert.deepEqual([plan.name, plan.lookup_key, plan.environment_id], ['Pro', 'pro', development])
  const devUnit = (await dev.get('/v1/pricing-units')).body.items[0]
  assert.notEqual(devUnit.id, src.unit.id)
  assert.deepEqual(plan.prices.map((x: { amount: string; meter_id: string | null; price_unit_id: string | null; lookup_key: string | null; entity_id: string }) =>
    [x.amount, x.meter_id, x.price_unit_id, x.lookup_key, x.entity_id]), [
    ['49', null, null, null, plan.id],
    ['0.01', calls.meter_id, null, 'pro_calls', plan.id],
    ['5', null, devUnit.id, null, plan.id],
  ])
  const ents = (await dev.get(`/v1/entitlements?entity_id=${plan.id}`)).body.items
  assert.deepEqual(ents.map((e: { feature_id: string; usage_limit: number | null }) => [e.feature_id, e.usage_limit]).sort(), [[calls.id, 1000], [devSso.id, null]].sort())
  // the source is untouched
  assert.deepEqual(await catalogRows(production), { meters: 2, pricing_units: 1, features: 3, plans: 2, prices: 4, entitlements: 3 })

  const second = await cloneAndWait(t.api, development)
  assert.notEqual(second.job_id, first.job_id)
  assert.deepEqual(second.progress, {
    phase: 'done', done: 5, total: 5, existing: 5, warnings: [],
    created: { meters: 0, pricing_units: 0, features: 0, plans: 0, prices: 0, entitlements: 0 },
  })
  assert.deepEqual(await catalogRows(development), { meters: 1, pricing_units: 1, features: 2, plans: 1, prices: 3, entitlements: 2 })

  // published since: only that is copied
  await newFeature(t.api, { name: 'Audit log', type: 'boolean', lookup_key: 'audit_log' })
  const third = await cloneAndWait(t.api, development)
  assert.deepEqual([third.progress.created.features, third.progress.existing, third.progress.done], [1, 5, 6])
  assert.equal((await catalogRows(development)).features, 3)
})

test('a run that fails part-way is retried without copying twice; two runs at once copy once', async () => {
  const t = await p.newTenant()
  const { production, development } = t.environments
  await sourceCatalog(t.api)
  const pair = { tenant_id: t.tenantId, source_environment_id: production, target_environment_id: development, actor: t.userId }

  // fails after the meter, the pricing unit and the first feature are committed
  await assert.rejects(runEnvironmentClone(p.ctx.orm, pair, async (pr) => {
    if (pr.done === 3) throw new Error('worker lost')
  }), /worker lost/)
  assert.deepEqual(await catalogRows(development), { meters: 1, pricing_units: 1, features: 1, plans: 0, prices: 0, entitlements: 0 })
  const retry = await runEnvironmentClone(p.ctx.orm, pair)
  assert.deepEqual([retry.existing, retry.created], [3, { meters: 0, pricing_units: 0, features: 1, plans: 1, prices: 3, entitlements: 2 }])
  assert.deepEqual(await catalogRows(development), { meters: 1, pricing_units: 1, features: 2, plans: 1, prices: 3, entitlements: 2 })

  const other = await p.newTenant()
  await sourceCatalog(other.api)
  const pair2 = { tenant_id: other.tenantId, source_environment_id: other.environments.production, target_environment_id: other.environments.development, actor: other.userId }
  const [a, b] = await Promise.all([runEnvironmentClone(p.ctx.orm, pair2), runEnvironmentClone(p.ctx.orm, pair2)])
  const sum = (k: keyof CloneProgress['created']) => a.created[k] + b.created[k]
  assert.deepEqual([sum('meters'), sum('pricing_units'), sum('features'), sum('plans'), sum('prices'), sum('entitlements')], [1, 1, 2, 1, 3, 2])
  // 5 records per run: each copied by one run and found by the other
  assert.equal(a.existing + b.existing, 5)
  assert.deepEqual(await catalogRows(other.environments.development), { meters: 1, pricing_units: 1, features: 2, plans: 1, prices: 3, entitlements: 2 })
})

test('tenancy: another tenant cannot start a clone into or out of these environments, nor read the job', async () => {
  const t = await p.newTenant()
  const { production, development } = t.environments
  await newFeature(t.api, { name: 'SSO', type: 'boolean', lookup_key: 'sso' })
  const job = await cloneAndWait(t.api, development)

  const other = await p.newTenant()
  assertError(await other.api.get(`/v1/environments/clone-jobs/${job.job_id}`), 404, 'not_found')
  assertError(await other.api.post('/v1/environments/clone', { target_environment_id: development }), 404, 'not_found', new RegExp(development))
  assertError(await other.api.post('/v1/environments/clone', { source_environment_id: production, target_environment_id: other.environments.development }), 404, 'not_found', new RegExp(production))
  assert.equal((await catalogRows(other.environments.development)).features, 0)
  // an environment of the same tenant that is neither source nor target does not see the job
  const staging = await created(t.api.post('/v1/environments', { name: 'staging', type: 'development' }))
  assertError(await p.client(t.apiKey, staging.id).get(`/v1/environments/clone-jobs/${job.job_id}`), 404, 'not_found')
  assert.equal((await p.client(t.apiKey, development).get(`/v1/environments/clone-jobs/${job.job_id}`)).status, 200)

  // a member's key of the same tenant may read the job, not start a clone
  const member = await created(t.api.post('/v1/users', { name: 'member', roles: ['member'] }))
  const memberKey = await created(t.api.post('/v1/secrets/api/keys', { name: 'member key', user_id: member.id }))
  const memberApi = p.client(memberKey.api_key)
  assertError(await memberApi.post('/v1/environments/clone', { target_environment_id: development }), 403, 'permission_denied', /super_admin/)
  assert.equal((await memberApi.get(`/v1/environments/clone-jobs/${job.job_id}`)).status, 200)

  assertError(await t.api.post('/v1/environments/clone', { target_environment_id: production }), 400, 'validation_error', /must differ/)
  assertError(await t.api.post('/v1/environments/clone', { target_environment_id: 'env_unknown' }), 404, 'not_found')
  assertError(await t.api.post('/v1/environments/clone', {}), 400, 'validation_error')
  assertError(await t.api.get('/v1/environments/clone-jobs/envclone_unknown'), 404, 'not_found')
})
