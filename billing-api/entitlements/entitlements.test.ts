// Entitlements over HTTP: features granted on plans and add-ons, the values each feature type
// takes, one live entitlement per (plan or add-on, feature), listEntitlements, isolation.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, common, eventsFor, flatMonthly, newFeature, newMeter, newPlan, rowCount } from '../features/test-kit.js'
import { listEntitlements } from './read.js'

const p = usePlatform()

/** A tenant with a plan, an add-on and one feature of each type. */
async function catalog(name = 'T') {
  const t = await p.newTenant(name)
  const meter = await newMeter(t.api)
  const plan = await newPlan(t.api)
  const addon = await created(t.api.post('/v1/addons', { name: 'Extra', lookup_key: 'extra' }))
  const calls = await newFeature(t.api, { name: 'API calls', type: 'metered', meter_id: meter.id })
  const sso = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
  const seats = await newFeature(t.api, { name: 'Seats', type: 'static' })
  return { ...t, meter, plan, addon, calls, sso, seats }
}

const grant = (api: ApiClient, body: Record<string, unknown>) => created(api.post('/v1/entitlements', body))

describe('create and read', () => {
  test('a metered entitlement on a plan: defaults, exact shape with the feature embedded, and its event', async () => {
    const c = await catalog()
    const res = await c.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.calls.id, usage_limit: 1000 })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    const e = res.body
    assert.match(e.id, /^ent_[0-9A-Z]{26}$/)
    assert.deepEqual(e, {
      ...common(e, c.tenantId, c.environments.production, c.userId),
      metadata: {}, entity_type: 'PLAN', entity_id: c.plan.id, plan_id: c.plan.id, feature_id: c.calls.id,
      is_enabled: true, usage_limit: 1000, is_soft_limit: false, static_value: null, usage_reset_period: 'MONTHLY',
      display_order: 0, start_date: null, end_date: null, feature: c.calls, feature_type: 'metered', parent_entitlement_id: null, plan: null, addon: null,
    })
    assert.deepEqual((await c.api.get(`/v1/entitlements/${e.id}`)).body, e)
    const events = await eventsFor(p, e.id)
    assert.deepEqual(events.map((x) => x.event_name), ['entitlement.created'])
    assert.deepEqual(events[0].payload, e)
  })

  test('every field can be given; boolean and static features take their own values; add-ons have no plan_id', async () => {
    const c = await catalog()
    const full = await grant(c.api, {
      entity_type: 'ADDON', entity_id: c.addon.id, feature_id: c.calls.id, is_enabled: false, usage_limit: 9007199254740991,
      is_soft_limit: true, usage_reset_period: 'NEVER', display_order: 3, start_date: '2026-01-01T00:00:00Z',
      end_date: '2027-01-01T00:00:00.000Z', metadata: { k: 'v' },
    })
    assert.deepEqual(full, {
      ...common(full, c.tenantId, c.environments.production, c.userId),
      metadata: { k: 'v' }, entity_type: 'ADDON', entity_id: c.addon.id, plan_id: null, feature_id: c.calls.id,
      is_enabled: false, usage_limit: 9007199254740991, is_soft_limit: true, static_value: null, usage_reset_period: 'NEVER',
      display_order: 3, start_date: '2026-01-01T00:00:00.000Z', end_date: '2027-01-01T00:00:00.000Z', feature: c.calls,
      feature_type: 'metered', parent_entitlement_id: null, plan: null, addon: null,
    })
    const unlimited = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.calls.id, usage_limit: null, usage_reset_period: 'DAILY' })
    assert.equal(unlimited.usage_limit, null)
    assert.equal(unlimited.usage_reset_period, 'DAILY')
    const zero = await grant(c.api, { entity_type: 'ADDON', entity_id: c.addon.id, feature_id: c.seats.id, static_value: '5' })
    assert.equal(zero.static_value, '5')
    assert.equal(zero.usage_reset_period, null)
    const sso = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.sso.id, is_enabled: false })
    assert.deepEqual(
      [sso.is_enabled, sso.usage_limit, sso.is_soft_limit, sso.static_value, sso.usage_reset_period, sso.feature.id],
      [false, null, false, null, null, c.sso.id],
    )
  })

  test('an archived feature is still embedded in the entitlements that grant it', async () => {
    const c = await catalog()
    const e = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.sso.id })
    await c.api.delete(`/v1/features/${c.sso.id}`)
    const read = (await c.api.get(`/v1/entitlements/${e.id}`)).body
    assert.equal(read.feature.status, 'archived')
    assert.equal(read.feature.id, c.sso.id)
  })
})

test('invalid entitlements are rejected with validation_error and nothing is written', async () => {
  const c = await catalog()
  const other = await catalog('other')
  const dev = p.client(c.apiKey, c.environments.development)
  const devFeature = await newFeature(dev, { name: 'SSO', type: 'boolean' })
  const devPlan = await newPlan(dev)
  const archivedFeature = await newFeature(c.api, { name: 'Old', type: 'boolean' })
  await c.api.delete(`/v1/features/${archivedFeature.id}`)
  const archivedAddon = await created(c.api.post('/v1/addons', { name: 'Old', lookup_key: 'old' }))
  await c.api.delete(`/v1/addons/${archivedAddon.id}`)
  const onPlan = (feature_id: string, extra: Record<string, unknown> = {}) => ({ entity_type: 'PLAN', entity_id: c.plan.id, feature_id, ...extra })
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ entity_type: 'PLAN', entity_id: c.plan.id }, /feature_id/],
    [{ entity_type: 'PLAN', feature_id: c.sso.id }, /entity_id/],
    [{ entity_id: c.plan.id, feature_id: c.sso.id }, /entity_type/],
    [{ ...onPlan(c.sso.id), entity_type: 'plan' }, /entity_type/],
    [{ ...onPlan(c.sso.id), entity_type: 'SUBSCRIPTION' }, /entity_type/],
    [onPlan(c.sso.id, { plan_id: c.plan.id }), /plan_id/],
    [onPlan(c.calls.id, { usage_limit: -1 }), /usage_limit/],
    [onPlan(c.calls.id, { usage_limit: 1.5 }), /usage_limit/],
    [onPlan(c.calls.id, { usage_limit: '10' }), /usage_limit/],
    [onPlan(c.calls.id, { usage_reset_period: 'HOURLY' }), /usage_reset_period/],
    [onPlan(c.calls.id, { usage_reset_period: 'monthly' }), /usage_reset_period/],
    [onPlan(c.calls.id, { start_date: 'tomorrow' }), /start_date/],
    [onPlan(c.calls.id, { is_enabled: 'yes' }), /is_enabled/],
    [onPlan(c.calls.id, { display_order: 1.5 }), /display_order/],
    [onPlan(c.calls.id, { start_date: '2026-02-01T00:00:00Z', end_date: '2026-02-01T00:00:00Z' }), /end_date must be after start_date/],
    [onPlan(c.calls.id, { static_value: '5' }), /static_value is only allowed for static features; feature .* is metered/],
    [onPlan(c.sso.id, { usage_limit: 10 }), /usage_limit is only allowed for metered features; feature .* is boolean/],
    [onPlan(c.sso.id, { usage_limit: 0 }), /usage_limit is only allowed for metered features/],
    [onPlan(c.sso.id, { is_soft_limit: true }), /is_soft_limit is only allowed for metered features/],
    [onPlan(c.sso.id, { usage_reset_period: 'MONTHLY' }), /usage_reset_period is only allowed for metered features/],
    [onPlan(c.sso.id, { static_value: 'x' }), /static_value is only allowed for static features/],
    [onPlan(c.seats.id), /static_value is required for static features/],
    [onPlan(c.seats.id, { static_value: '' }), /static_value/],
    [onPlan(c.seats.id, { static_value: '5', usage_limit: 5 }), /usage_limit is only allowed for metered features/],
    [onPlan('feat_unknown'), /feature_id: feature feat_unknown not found/],
    [onPlan(other.sso.id), /feature_id: feature .* not found/],
    [onPlan(devFeature.id), /feature_id: feature .* not found/],
    [onPlan(archivedFeature.id), /feature_id: feature .* is archived/],
    [{ entity_type: 'PLAN', entity_id: 'plan_unknown', feature_id: c.sso.id }, /entity_id: plan plan_unknown not found/],
    [{ entity_type: 'PLAN', entity_id: other.plan.id, feature_id: c.sso.id }, /entity_id: plan .* not found/],
    [{ entity_type: 'PLAN', entity_id: devPlan.id, feature_id: c.sso.id }, /entity_id: plan .* not found/],
    [{ entity_type: 'PLAN', entity_id: c.addon.id, feature_id: c.sso.id }, /entity_id: plan .* not found/],
    [{ entity_type: 'ADDON', entity_id: c.plan.id, feature_id: c.sso.id }, /entity_id: addon .* not found/],
    [{ entity_type: 'ADDON', entity_id: other.addon.id, feature_id: c.sso.id }, /entity_id: addon .* not found/],
    [{ entity_type: 'ADDON', entity_id: archivedAddon.id, feature_id: c.sso.id }, /entity_id: addon .* is archived/],
  ]
  for (const [body, message] of cases) assertError(await c.api.post('/v1/entitlements', body), 400, 'validation_error', message)
  assert.equal(await rowCount(p, 'entitlements', c.tenantId), 0)
})

test('one live entitlement per (plan or add-on, feature): 409, and deleting frees the pair', async () => {
  const c = await catalog()
  const plan2 = await newPlan(c.api, { name: 'Team' })
  const body = { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.sso.id }
  const first = await grant(c.api, body)
  assertError(await c.api.post('/v1/entitlements', { ...body, is_enabled: false }), 409, 'already_exists', /already has an entitlement for feature/)
  assert.equal(await rowCount(p, 'entitlements', c.tenantId), 1)
  // The same feature on another plan, or on an add-on, is a different pair.
  await grant(c.api, { ...body, entity_id: plan2.id })
  await grant(c.api, { ...body, entity_type: 'ADDON', entity_id: c.addon.id })
  assert.equal((await c.api.delete(`/v1/entitlements/${first.id}`)).status, 200)
  const again = await grant(c.api, { ...body, is_enabled: false })
  assert.notEqual(again.id, first.id)
  assert.equal(again.is_enabled, false)
})

describe('update', () => {
  test('changes the given values; null means unlimited or clears a date', async () => {
    const c = await catalog()
    const e = await grant(c.api, {
      entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.calls.id, usage_limit: 100, start_date: '2026-01-01T00:00:00Z', metadata: { a: '1' },
    })
    const res = await c.api.put(`/v1/entitlements/${e.id}`, {
      usage_limit: null, is_soft_limit: true, usage_reset_period: 'WEEKLY', display_order: -2, start_date: null, metadata: { b: '2' },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, {
      ...e, usage_limit: null, is_soft_limit: true, usage_reset_period: 'WEEKLY', display_order: -2, start_date: null, metadata: { b: '2' },
      updated_at: res.body.updated_at,
    })
    assert.deepEqual((await c.api.get(`/v1/entitlements/${e.id}`)).body, res.body)
    assert.equal((await c.api.put(`/v1/entitlements/${e.id}`, { usage_limit: 0 })).body.usage_limit, 0)
    assert.deepEqual((await eventsFor(p, e.id)).map((x) => x.event_name), ['entitlement.created', 'entitlement.updated', 'entitlement.updated'])
  })

  test('the feature type rules apply to the updated entitlement; what is granted to whom is fixed', async () => {
    const c = await catalog()
    const sso = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.sso.id })
    const seats = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.seats.id, static_value: '3' })
    const calls = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.calls.id, end_date: '2026-06-01T00:00:00Z' })
    assertError(await c.api.put(`/v1/entitlements/${sso.id}`, { usage_limit: 5 }), 400, 'validation_error', /usage_limit is only allowed for metered/)
    assertError(await c.api.put(`/v1/entitlements/${seats.id}`, { static_value: null }), 400, 'validation_error', /static_value is required/)
    assertError(await c.api.put(`/v1/entitlements/${calls.id}`, { start_date: '2026-07-01T00:00:00Z' }), 400, 'validation_error', /end_date must be after start_date/)
    assertError(await c.api.put(`/v1/entitlements/${calls.id}`, { usage_reset_period: null }), 400, 'validation_error', /usage_reset_period/)
    assertError(await c.api.put(`/v1/entitlements/${sso.id}`, { feature_id: c.calls.id }), 400, 'validation_error', /feature_id/)
    assertError(await c.api.put(`/v1/entitlements/${sso.id}`, { entity_id: c.addon.id }), 400, 'validation_error', /entity_id/)
    assertError(await c.api.put('/v1/entitlements/ent_unknown', { is_enabled: false }), 404, 'not_found')
    for (const e of [sso, seats, calls]) assert.deepEqual((await c.api.get(`/v1/entitlements/${e.id}`)).body, e)
  })
})

test('delete removes the entitlement: 404 afterwards and gone from lists', async () => {
  const c = await catalog()
  const e = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.sso.id })
  const res = await c.api.delete(`/v1/entitlements/${e.id}`)
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { message: `${e.id} deleted` })
  assertError(await c.api.get(`/v1/entitlements/${e.id}`), 404, 'not_found')
  assertError(await c.api.put(`/v1/entitlements/${e.id}`, { is_enabled: false }), 404, 'not_found')
  assertError(await c.api.delete(`/v1/entitlements/${e.id}`), 404, 'not_found')
  assert.deepEqual((await c.api.get('/v1/entitlements')).body.items, [])
  assert.deepEqual((await eventsFor(p, e.id)).map((x) => x.event_name), ['entitlement.created', 'entitlement.deleted'])
})

test('list filters by entity_type, entity_id and feature_id, orders by display_order and pages', async () => {
  const c = await catalog()
  const plan2 = await newPlan(c.api, { name: 'Team' })
  const e1 = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.sso.id, display_order: 2 })
  const e2 = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.calls.id, display_order: 1 })
  const e3 = await grant(c.api, { entity_type: 'ADDON', entity_id: c.addon.id, feature_id: c.sso.id, display_order: 1 })
  const e4 = await grant(c.api, { entity_type: 'PLAN', entity_id: plan2.id, feature_id: c.seats.id, static_value: 'x', display_order: 0 })
  const list = async (q = '') => (await c.api.get(`/v1/entitlements${q}`)).body
  const ids = async (q: string) => (await list(q)).items.map((e: any) => e.id)
  const all = await list()
  assert.deepEqual(all.items, [e4, e2, e3, e1])
  assert.deepEqual(all.pagination, { limit: 50, offset: 0, total: 4 })
  assert.deepEqual(await ids('?entity_type=PLAN'), [e4.id, e2.id, e1.id])
  assert.deepEqual(await ids('?entity_type=ADDON'), [e3.id])
  assert.deepEqual(await ids(`?entity_id=${c.plan.id}`), [e2.id, e1.id])
  assert.deepEqual(await ids(`?entity_type=PLAN&entity_id=${c.plan.id}&feature_id=${c.sso.id}`), [e1.id])
  assert.deepEqual(await ids(`?feature_id=${c.sso.id}`), [e3.id, e1.id])
  assert.deepEqual(await list('?limit=2&offset=2'), { items: [e3, e1], pagination: { limit: 2, offset: 2, total: 4 } })
  assertError(await c.api.get('/v1/entitlements?entity_type=plan'), 400, 'validation_error', /entity_type/)
})

test("Flexprice's forms: feature_type is checked, search by id lists, bulk create, an add-on's and a plan's entitlements", async () => {
  const c = await catalog()
  const e = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.calls.id, feature_type: 'metered', usage_limit: 10 })
  assert.equal(e.feature_type, 'metered')
  assertError(await c.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.sso.id, feature_type: 'metered' }), 400, 'validation_error', /feature_type: feature \S+ is boolean, not metered/)
  assertError(await c.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.sso.id, feature_type: 'config' }), 400, 'validation_error', /feature_type/)

  const bulk = await c.api.post('/v1/entitlements/bulk', { items: [
    { entity_type: 'ADDON', entity_id: c.addon.id, feature_id: c.sso.id, feature_type: 'boolean' },
    { entity_type: 'ADDON', entity_id: c.addon.id, feature_id: c.seats.id, static_value: '5' },
  ] })
  assert.equal(bulk.status, 201, JSON.stringify(bulk.body))
  assert.deepEqual(bulk.body.items.map((x: any) => [x.entity_id, x.feature_id, x.static_value]), [[c.addon.id, c.sso.id, null], [c.addon.id, c.seats.id, '5']])
  const refused = await c.api.post('/v1/entitlements/bulk', { items: [{ entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.seats.id, static_value: '1' }, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.calls.id }] })
  assertError(refused, 409, 'already_exists')
  assert.equal(await rowCount(p, 'entitlements', c.tenantId), 3, 'a refused bulk create writes nothing')

  const search = async (body: object) => (await c.api.post('/v1/entitlements/search', body)).body.items.map((x: any) => x.id)
  assert.deepEqual(await search({ feature_ids: [c.calls.id] }), [e.id])
  assert.deepEqual(await search({ plan_ids: [c.plan.id] }), [e.id])
  assert.deepEqual(await search({ entity_ids: [c.addon.id], feature_ids: [c.seats.id] }), [bulk.body.items[1].id])
  assertError(await c.api.post('/v1/entitlements/search', { plan_ids: [c.plan.id], entity_type: 'ADDON' }), 400, 'validation_error', /plan_ids/)

  const addonPage = (await c.api.get(`/v1/addons/${c.addon.id}/entitlements`)).body
  assert.deepEqual([addonPage.items, addonPage.pagination], [bulk.body.items, { limit: 50, offset: 0, total: 2 }])
  assertError(await c.api.get('/v1/addons/addon_unknown/entitlements'), 404, 'not_found')
  const plan = (await c.api.get(`/v1/plans/${c.plan.id}/entitlements`)).body
  assert.deepEqual(plan, (await c.api.get(`/v1/plans/${c.plan.id}`)).body)
  assert.deepEqual(plan.entitlements, [e])
})

test("a customer's and a subscription's entitlements: per feature, the live grants added up, and their sources", async () => {
  const t = await p.newTenant()
  const meter = await newMeter(t.api)
  const calls = await newFeature(t.api, { name: 'API calls', type: 'metered', meter_id: meter.id })
  const sso = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
  const plan = await newPlan(t.api, { prices: [flatMonthly('10')] })
  const limit = await grant(t.api, { entity_type: 'PLAN', entity_id: plan.id, feature_id: calls.id, usage_limit: 100, usage_reset_period: 'MONTHLY' })
  const off = await grant(t.api, { entity_type: 'PLAN', entity_id: plan.id, feature_id: sso.id, is_enabled: false })
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const subscribe = () => created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD' }))
  const [a, b] = [await subscribe(), await subscribe()]

  const mine = (await t.api.get(`/v1/customers/${customer.id}/entitlements`)).body
  assert.equal(mine.customer_id, customer.id)
  const byFeature = new Map(mine.features.map((f: any) => [f.feature.id, f]))
  const callsOf = byFeature.get(calls.id) as any
  // a plan two subscriptions share grants once per subscription: the limits add up
  assert.deepEqual(callsOf.entitlement, { is_enabled: true, is_soft_limit: false, usage_limit: 200, usage_reset_period: 'MONTHLY', static_values: [] })
  assert.deepEqual(callsOf.sources.map((x: any) => [x.entitlement_id, x.subscription_id, x.usage_limit, x.entity_type]), [[limit.id, a.id, 100, 'PLAN'], [limit.id, b.id, 100, 'PLAN']])
  assert.deepEqual((byFeature.get(sso.id) as any).entitlement.is_enabled, false)
  assert.equal((byFeature.get(sso.id) as any).sources[0].entitlement_id, off.id)

  const one = (await t.api.get(`/v1/subscriptions/${a.id}/entitlements`)).body
  assert.deepEqual([one.subscription_id, one.plan_id], [a.id, plan.id])
  assert.equal(one.features.find((f: any) => f.feature.id === calls.id).entitlement.usage_limit, 100)
  assertError(await t.api.get('/v1/customers/cust_unknown/entitlements'), 404, 'not_found')
  assertError(await (await p.newTenant()).api.get(`/v1/subscriptions/${a.id}/entitlements`), 404, 'not_found')
})

test('listEntitlements returns the serialized entitlements of one plan or add-on, for their reads', async () => {
  const c = await catalog()
  const e1 = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.sso.id, display_order: 2 })
  const e2 = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.calls.id, display_order: 1 })
  const e3 = await grant(c.api, { entity_type: 'ADDON', entity_id: c.addon.id, feature_id: c.sso.id })
  const gone = await grant(c.api, { entity_type: 'PLAN', entity_id: c.plan.id, feature_id: c.seats.id, static_value: '1' })
  await c.api.delete(`/v1/entitlements/${gone.id}`)
  const scope = { tenant_id: c.tenantId, environment_id: c.environments.production }
  const em = () => p.ctx.orm.em.fork()
  assert.deepEqual(await listEntitlements(em(), scope, 'PLAN', c.plan.id), [e2, e1])
  assert.deepEqual(await listEntitlements(em(), scope, 'ADDON', c.addon.id), [e3])
  assert.deepEqual(await listEntitlements(em(), scope, 'ADDON', c.plan.id), [])
  assert.deepEqual(await listEntitlements(em(), { ...scope, environment_id: c.environments.development }, 'PLAN', c.plan.id), [])
})

test('entitlements of another tenant or environment answer 404 and are never listed or changed', async () => {
  const a = await catalog('A')
  const b = await p.newTenant('B')
  const dev = p.client(a.apiKey, a.environments.development)
  const e = await grant(a.api, { entity_type: 'PLAN', entity_id: a.plan.id, feature_id: a.calls.id, usage_limit: 5 })
  for (const api of [b.api, dev]) {
    assertError(await api.get(`/v1/entitlements/${e.id}`), 404, 'not_found')
    assertError(await api.put(`/v1/entitlements/${e.id}`, { usage_limit: 1000000 }), 404, 'not_found')
    assertError(await api.delete(`/v1/entitlements/${e.id}`), 404, 'not_found')
    assert.deepEqual((await api.get('/v1/entitlements')).body.items, [])
    assert.deepEqual((await api.get(`/v1/entitlements?entity_id=${a.plan.id}`)).body.items, [])
    assertError(await api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: a.plan.id, feature_id: a.sso.id }), 400, 'validation_error', /not found/)
  }
  assert.deepEqual((await a.api.get(`/v1/entitlements/${e.id}`)).body, e)
  assert.equal(await rowCount(p, 'entitlements', b.tenantId), 0)
})
