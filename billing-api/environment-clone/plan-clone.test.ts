// POST /plans/{id}/clone: a plan copied within its environment with its prices, entitlements and
// plan credit grants; the source is untouched.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { assertError, countRows } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'
import { flatMonthly, newFeature, newMeter, usagePrice } from '../features/test-kit.js'

const p = usePlatform({ services: ['billing-api'] })

test('a published plan is cloned with its prices, entitlements and credit grants under a new name and lookup key', async () => {
  const t = await p.newTenant()
  const meter = await newMeter(t.api)
  const calls = await newFeature(t.api, { name: 'Calls', type: 'metered', meter_id: meter.id })
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro', lookup_key: 'pro', description: 'for teams', metadata: { tier: 'pro' },
    prices: [{ ...flatMonthly('20.00'), lookup_key: 'pro-fee' }, usagePrice(meter.id, '0.002')],
  }))
  const ent = await created(t.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: calls.id, usage_limit: 1000 }))
  const grant = await created(t.api.post('/v1/creditgrants', { name: 'Welcome', credits: '10', period: 'MONTHLY', plan_id: plan.id }))
  const before = await countRows(p, 'prices', t.tenantId)

  const res = await t.api.post(`/v1/plans/${plan.id}/clone`, { name: 'Pro copy', lookup_key: 'pro-copy' })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const copy = res.body
  assert.deepEqual([copy.name, copy.lookup_key, copy.description, copy.metadata, copy.status], ['Pro copy', 'pro-copy', 'for teams', { tier: 'pro' }, 'published'])
  assert.notEqual(copy.id, plan.id)
  const strip = (x: any) => ({ ...x, id: undefined, entity_id: undefined, created_at: undefined, updated_at: undefined, lookup_key: undefined })
  assert.deepEqual(copy.prices.map(strip), plan.prices.map(strip))
  assert.ok(copy.prices.every((x: any) => x.entity_id === copy.id && x.lookup_key === null))
  assert.deepEqual(copy.entitlements.map((e: any) => [e.feature_id, e.usage_limit, e.entity_id]), [[calls.id, 1000, copy.id]])
  assert.notEqual(copy.entitlements[0].id, ent.id)
  assert.deepEqual(copy.credit_grants.map((g: any) => [g.name, g.credits, g.period, g.plan_id]), [['Welcome', '10', 'MONTHLY', copy.id]])
  assert.notEqual(copy.credit_grants[0].id, grant.id)
  assert.equal(await countRows(p, 'prices', t.tenantId), before + 2)
  assert.deepEqual((await t.api.get(`/v1/plans/${copy.id}`)).body, copy)
  const source = (await t.api.get(`/v1/plans/${plan.id}`)).body
  assert.deepEqual([source.prices.map((x: any) => x.id), source.entitlements.map((e: any) => e.id)], [plan.prices.map((x: any) => x.id), [ent.id]])

  assertError(await t.api.post(`/v1/plans/${plan.id}/clone`, { name: 'Again', lookup_key: 'pro-copy' }), 409, 'already_exists', /lookup_key pro-copy/)
  assertError(await t.api.post(`/v1/plans/${plan.id}/clone`, { name: 'No key' }), 400, 'validation_error', /lookup_key/)
  assertError(await t.api.post('/v1/plans/plan_unknown/clone', { name: 'x', lookup_key: 'x' }), 404, 'not_found')
  assertError(await (await p.newTenant()).api.post(`/v1/plans/${plan.id}/clone`, { name: 'x', lookup_key: 'x' }), 404, 'not_found')
  await t.api.delete(`/v1/plans/${plan.id}`)
  assertError(await t.api.post(`/v1/plans/${plan.id}/clone`, { name: 'x', lookup_key: 'x' }), 400, 'validation_error', /archived/)
})
