// Add-ons over HTTP: created with their prices in one transaction, read with prices and
// entitlements, updated, archived, and isolated per tenant and environment.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, common, eventsFor, flatMonthly, newFeature, newMeter, rowCount, usagePrice } from '../features/test-kit.js'

const p = usePlatform()

const newAddon = (api: ApiClient, body: Record<string, unknown>) => created(api.post('/v1/addons', body))

describe('create and read', () => {
  test('an add-on is created with its prices; reads return prices and entitlements', async () => {
    const t = await p.newTenant()
    const meter = await newMeter(t.api)
    const res = await t.api.post('/v1/addons', {
      name: 'Priority support', lookup_key: 'priority_support', description: '24/7', metadata: { sku: 'ps-1' },
      prices: [flatMonthly('49.50'), usagePrice(meter.id, '0.002')],
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    const a = res.body
    assert.match(a.id, /^addon_[0-9A-Z]{26}$/)
    const { prices, ...rest } = a
    assert.deepEqual(rest, {
      ...common(a, t.tenantId, t.environments.production, t.userId),
      metadata: { sku: 'ps-1' }, name: 'Priority support', lookup_key: 'priority_support', description: '24/7', entitlements: [], type: 'onetime',
    })
    assert.equal(prices.length, 2)
    assert.deepEqual(
      prices.map((x: any) => [x.entity_type, x.entity_id, x.type, x.amount, x.meter_id, x.invoice_cadence, x.sequence, x.status, x.tenant_id, x.environment_id]),
      [
        ['ADDON', a.id, 'FIXED', '49.50', null, 'ADVANCE', 1, 'published', t.tenantId, t.environments.production],
        ['ADDON', a.id, 'USAGE', '0.002', meter.id, 'ARREAR', 2, 'published', t.tenantId, t.environments.production],
      ],
    )
    assert.match(prices[0].id, /^price_/)
    assert.deepEqual((await t.api.get(`/v1/addons/${a.id}`)).body, a)
    assert.deepEqual((await t.api.get('/v1/addons/lookup/priority_support')).body, a)
    assertError(await t.api.get('/v1/addons/lookup/unknown'), 404, 'not_found', /addon with lookup_key unknown not found/)
    assert.equal(await rowCount(p, 'prices', t.tenantId), 2)
    // Add-on prices are not plan prices: they never show up on a plan.
    assert.deepEqual((await t.api.get('/v1/plans')).body.items, [])
    const events = await eventsFor(p, a.id)
    assert.deepEqual(events.map((e) => e.event_name), ['addon.created'])
    assert.deepEqual(events[0].payload, a)
  })

  test('an add-on without prices; its entitlements appear on reads with the feature embedded', async () => {
    const t = await p.newTenant()
    const a = await newAddon(t.api, { name: 'SSO pack', lookup_key: 'sso_pack' })
    assert.deepEqual([a.description, a.prices, a.entitlements, a.metadata], [null, [], [], {}])
    const sso = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
    const seats = await newFeature(t.api, { name: 'Seats', type: 'static' })
    const e2 = await created(t.api.post('/v1/entitlements', { entity_type: 'ADDON', entity_id: a.id, feature_id: seats.id, static_value: '10', display_order: 2 }))
    const e1 = await created(t.api.post('/v1/entitlements', { entity_type: 'ADDON', entity_id: a.id, feature_id: sso.id, display_order: 1 }))
    const read = (await t.api.get(`/v1/addons/${a.id}`)).body
    assert.deepEqual(read.entitlements, [e1, e2])
    assert.deepEqual(read.entitlements[0].feature, sso)
    assert.deepEqual((await t.api.get('/v1/addons')).body.items[0].entitlements, [e1, e2])
  })
})

test('invalid add-ons are rejected and nothing is written: no add-on, no price', async () => {
  const t = await p.newTenant()
  const other = await p.newTenant('other')
  const meter = await newMeter(t.api)
  const otherMeter = await newMeter(other.api)
  const ok = { name: 'X', lookup_key: 'x' }
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ lookup_key: 'x' }, /name/],
    [{ name: 'X' }, /lookup_key/],
    [{ ...ok, name: '  ' }, /name/],
    [{ ...ok, lookup_key: 'x y' }, /lookup_key/],
    [{ ...ok, description: 'd'.repeat(2001) }, /description/],
    [{ ...ok, entitlements: [] }, /entitlements/],
    [{ ...ok, prices: [{ ...flatMonthly('1'), amount: 1 }] }, /prices\[0\]\.amount/],
    [{ ...ok, prices: [flatMonthly('1'), { ...usagePrice(meter.id, '1'), invoice_cadence: 'ADVANCE' }] }, /prices\[1\]\.invoice_cadence.*ARREAR/],
    [{ ...ok, prices: [usagePrice(otherMeter.id, '1')] }, /prices\[0\]\.meter_id/],
    [{ ...ok, prices: [{ ...flatMonthly('1'), meter_id: meter.id }] }, /prices\[0\]\.meter_id/],
    [{ ...ok, type: 'multiple_instance' }, /type/],
  ]
  for (const [body, message] of cases) assertError(await t.api.post('/v1/addons', body), 400, 'validation_error', message)
  assert.equal(await rowCount(p, 'addons', t.tenantId), 0)
  assert.equal(await rowCount(p, 'prices', t.tenantId), 0)
})

test('lookup keys are unique per environment; an archived add-on keeps its key', async () => {
  const t = await p.newTenant()
  const a = await newAddon(t.api, { name: 'A', lookup_key: 'extra', prices: [flatMonthly('5')] })
  assertError(await t.api.post('/v1/addons', { name: 'B', lookup_key: 'extra', prices: [flatMonthly('7')] }), 409, 'already_exists', /lookup_key extra/)
  assert.equal(await rowCount(p, 'addons', t.tenantId), 1)
  assert.equal(await rowCount(p, 'prices', t.tenantId), 1)
  await t.api.delete(`/v1/addons/${a.id}`)
  assertError(await t.api.post('/v1/addons', { name: 'B', lookup_key: 'extra' }), 409, 'already_exists')
  assert.equal((await newAddon(p.client(t.apiKey, t.environments.development), { name: 'A', lookup_key: 'extra' })).lookup_key, 'extra')
})

test('update changes name, description and metadata; lookup_key and prices are fixed', async () => {
  const t = await p.newTenant()
  const a = await newAddon(t.api, { name: 'A', lookup_key: 'a', description: 'old', metadata: { x: '1' }, prices: [flatMonthly('5')] })
  const res = await t.api.put(`/v1/addons/${a.id}`, { name: 'Renamed', description: null, metadata: { y: '2' } })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body, { ...a, name: 'Renamed', description: null, metadata: { y: '2' }, updated_at: res.body.updated_at })
  assert.deepEqual((await t.api.get(`/v1/addons/${a.id}`)).body, res.body)
  assertError(await t.api.put(`/v1/addons/${a.id}`, { lookup_key: 'b' }), 400, 'validation_error', /lookup_key/)
  assertError(await t.api.put(`/v1/addons/${a.id}`, { prices: [] }), 400, 'validation_error', /prices/)
  assertError(await t.api.put(`/v1/addons/${a.id}`, { name: '' }), 400, 'validation_error', /name/)
  assertError(await t.api.put('/v1/addons/addon_unknown', { name: 'x' }), 404, 'not_found')
  assert.deepEqual((await eventsFor(p, a.id)).map((e) => e.event_name), ['addon.created', 'addon.updated'])
})

test('delete archives: readable by id with its prices and entitlements, gone from lists, unchangeable', async () => {
  const t = await p.newTenant()
  const a = await newAddon(t.api, { name: 'A', lookup_key: 'a', prices: [flatMonthly('5')] })
  const sso = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
  const e = await created(t.api.post('/v1/entitlements', { entity_type: 'ADDON', entity_id: a.id, feature_id: sso.id }))
  const del = await t.api.delete(`/v1/addons/${a.id}`)
  assert.equal(del.status, 200)
  assert.deepEqual(del.body, { message: `${a.id} deleted` })
  const read = (await t.api.get(`/v1/addons/${a.id}`)).body
  assert.deepEqual(read, { ...a, status: 'archived', entitlements: [e], updated_at: read.updated_at })
  assert.deepEqual((await t.api.get('/v1/addons')).body, { items: [], pagination: { limit: 50, offset: 0, total: 0 } })
  assertError(await t.api.put(`/v1/addons/${a.id}`, { name: 'x' }), 400, 'invalid_operation', /archived/)
  assert.equal((await t.api.delete(`/v1/addons/${a.id}`)).status, 200)
  assert.deepEqual((await eventsFor(p, a.id)).map((x) => x.event_name), ['addon.created', 'addon.deleted'])
  assertError(await t.api.delete('/v1/addons/addon_unknown'), 404, 'not_found')
})

test('list pages in creation order, filters by lookup_key and carries each add-on\'s prices', async () => {
  const t = await p.newTenant()
  const a = await newAddon(t.api, { name: 'A', lookup_key: 'a', prices: [flatMonthly('1')] })
  const b = await newAddon(t.api, { name: 'B', lookup_key: 'b' })
  const c = await newAddon(t.api, { name: 'C', lookup_key: 'c', prices: [flatMonthly('3'), flatMonthly('4')] })
  const list = async (q = '') => (await t.api.get(`/v1/addons${q}`)).body
  assert.deepEqual(await list(), { items: [a, b, c], pagination: { limit: 50, offset: 0, total: 3 } })
  assert.deepEqual(await list('?limit=2&offset=1'), { items: [b, c], pagination: { limit: 2, offset: 1, total: 3 } })
  assert.deepEqual(await list('?lookup_key=c'), { items: [c], pagination: { limit: 50, offset: 0, total: 1 } })
  assertError(await t.api.get('/v1/addons?limit=abc'), 400, 'validation_error', /limit/)
})

test('add-ons of another tenant or environment answer 404 and are never listed or changed', async () => {
  const a = await p.newTenant('A')
  const b = await p.newTenant('B')
  const dev = p.client(a.apiKey, a.environments.development)
  const addon = await newAddon(a.api, { name: 'A', lookup_key: 'extra', prices: [flatMonthly('5')] })
  for (const api of [b.api, dev]) {
    assertError(await api.get(`/v1/addons/${addon.id}`), 404, 'not_found')
    assertError(await api.put(`/v1/addons/${addon.id}`, { name: 'hijacked' }), 404, 'not_found')
    assertError(await api.delete(`/v1/addons/${addon.id}`), 404, 'not_found')
    assert.deepEqual((await api.get('/v1/addons')).body.items, [])
    assert.equal((await newAddon(api, { name: 'A', lookup_key: 'extra' })).lookup_key, 'extra')
  }
  assert.deepEqual((await a.api.get(`/v1/addons/${addon.id}`)).body, addon)
})
