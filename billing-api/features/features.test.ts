// Features over HTTP: create (with generated lookup keys), read, list, update, archive, the
// rules tying settings to the feature type, and tenant and environment isolation.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, common, eventsFor, newFeature, newMeter, rowCount } from './test-kit.js'
import { slugify } from '../db/lookup-key.js'

const p = usePlatform()

const alerts = { alert_enabled: true, info: { threshold: 800 }, warning: { threshold: 900 }, critical: { threshold: 1000 } }
const gb = { conversion_rate: 1000000000, unit_singular: 'GB', unit_plural: 'GBs' }

test('slugify makes lookup keys from names', () => {
  assert.equal(slugify('API Calls'), 'api_calls')
  assert.equal(slugify('  Seats (max)  '), 'seats_max')
  assert.equal(slugify('Café crème'), 'cafe_creme')
  assert.equal(slugify('SSO/SAML--login'), 'sso_saml_login')
  assert.equal(slugify('日本'), '')
  assert.equal(slugify('x'.repeat(300)).length, 240)
})

describe('create and read', () => {
  test('a metered feature is stored with every field and read back the same', async () => {
    const t = await p.newTenant()
    const meter = await newMeter(t.api)
    const res = await t.api.post('/v1/features', {
      name: 'Storage', type: 'metered', lookup_key: 'storage', description: 'Bytes stored', meter_id: meter.id,
      unit_singular: 'byte', unit_plural: 'bytes', alert_settings: alerts, reporting_unit: gb, metadata: { tier: 'gold' },
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    const f = res.body
    assert.match(f.id, /^feat_[0-9A-Z]{26}$/)
    assert.deepEqual(f, {
      ...common(f, t.tenantId, t.environments.production, t.userId),
      metadata: { tier: 'gold' }, name: 'Storage', lookup_key: 'storage', description: 'Bytes stored', type: 'metered',
      meter_id: meter.id, group_id: null, unit_singular: 'byte', unit_plural: 'bytes', alert_settings: alerts, reporting_unit: gb, meter: null,
    })
    assert.ok(!Number.isNaN(Date.parse(f.created_at)))
    assert.deepEqual((await t.api.get(`/v1/features/${f.id}`)).body, f)
    const events = await eventsFor(p, f.id)
    assert.deepEqual(events.map((e) => e.event_name), ['feature.created'])
    assert.deepEqual(events[0].payload, f)
  })

  test('boolean and static features need no meter; omitted settings are null and alerts are normalized', async () => {
    const t = await p.newTenant()
    const sso = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
    assert.deepEqual(sso, {
      ...common(sso, t.tenantId, t.environments.production, t.userId),
      metadata: {}, name: 'SSO', lookup_key: 'sso', description: null, type: 'boolean', meter_id: null, group_id: null,
      unit_singular: null, unit_plural: null, alert_settings: null, reporting_unit: null, meter: null,
    })
    const seats = await newFeature(t.api, { name: 'Seats', type: 'static', unit_singular: 'seat', unit_plural: 'seats' })
    assert.equal(seats.type, 'static')
    assert.equal(seats.unit_plural, 'seats')
    const meter = await newMeter(t.api)
    const calls = await newFeature(t.api, { name: 'Calls', type: 'metered', meter_id: meter.id, alert_settings: { critical: { threshold: 5 } } })
    assert.deepEqual(calls.alert_settings, { alert_enabled: false, critical: { threshold: 5 }, warning: null, info: null })
  })
})

describe('lookup keys', () => {
  test('are generated from the name, with _2, _3 ... when taken in the environment', async () => {
    const t = await p.newTenant()
    const key = async (body: Record<string, unknown>) => (await newFeature(t.api, { type: 'boolean', ...body })).lookup_key
    assert.equal(await key({ name: 'API Calls' }), 'api_calls')
    assert.equal(await key({ name: 'API Calls' }), 'api_calls_2')
    assert.equal(await key({ name: 'api  calls!' }), 'api_calls_3')
    assert.equal(await key({ name: 'Other', lookup_key: 'api_calls_4' }), 'api_calls_4')
    assert.equal(await key({ name: 'API Calls' }), 'api_calls_5')
    assert.equal(await key({ name: 'Café Seats' }), 'cafe_seats')
    assert.equal(await key({ name: '!!!' }), 'feature')
    assert.equal(await key({ name: '日本' }), 'feature_2')
    // Another environment of the same tenant has its own keys.
    const dev = p.client(t.apiKey, t.environments.development)
    assert.equal((await newFeature(dev, { name: 'API Calls', type: 'boolean' })).lookup_key, 'api_calls')
  })

  test('concurrent creates of the same name all succeed with distinct keys', async () => {
    const t = await p.newTenant()
    const results = await Promise.all(Array.from({ length: 5 }, () => t.api.post('/v1/features', { name: 'Seats', type: 'boolean' })))
    assert.deepEqual(results.map((r) => r.status), [201, 201, 201, 201, 201])
    assert.deepEqual(results.map((r) => r.body.lookup_key).sort(), ['seats', 'seats_2', 'seats_3', 'seats_4', 'seats_5'])
  })

  test('an explicit duplicate is 409 and writes nothing; archived features keep their key', async () => {
    const t = await p.newTenant()
    const first = await newFeature(t.api, { name: 'SSO', type: 'boolean', lookup_key: 'sso' })
    assertError(await t.api.post('/v1/features', { name: 'Other', type: 'static', lookup_key: 'sso' }), 409, 'already_exists', /lookup_key sso/)
    assert.equal(await rowCount(p, 'features', t.tenantId), 1)
    assert.equal((await t.api.delete(`/v1/features/${first.id}`)).status, 200)
    assertError(await t.api.post('/v1/features', { name: 'SSO', type: 'boolean', lookup_key: 'sso' }), 409, 'already_exists')
    assert.equal((await newFeature(t.api, { name: 'SSO', type: 'boolean' })).lookup_key, 'sso_2')
    // The same key in the other environment is fine.
    const dev = p.client(t.apiKey, t.environments.development)
    assert.equal((await newFeature(dev, { name: 'SSO', type: 'boolean', lookup_key: 'sso' })).lookup_key, 'sso')
  })
})

test('invalid features are rejected with validation_error and nothing is written', async () => {
  const t = await p.newTenant()
  const other = await p.newTenant('other')
  const meter = await newMeter(t.api)
  const otherMeter = await newMeter(other.api)
  const devMeter = await newMeter(p.client(t.apiKey, t.environments.development))
  const archivedMeter = await newMeter(t.api, 'old')
  assert.equal((await t.api.delete(`/v1/meters/${archivedMeter.id}`)).status, 204)
  const metered = { name: 'Calls', type: 'metered', meter_id: meter.id }
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ type: 'boolean' }, /name/],
    [{ name: '   ', type: 'boolean' }, /name/],
    [{ name: 'x'.repeat(256), type: 'boolean' }, /name/],
    [{ name: 'X' }, /type/],
    [{ name: 'X', type: 'counter' }, /type/],
    [{ name: 'X', type: 'boolean', surprise: 1 }, /surprise/],
    [{ name: 'X', type: 'boolean', lookup_key: 'has space' }, /lookup_key/],
    [{ name: 'X', type: 'boolean', lookup_key: '' }, /lookup_key/],
    [{ name: 'X', type: 'boolean', metadata: { n: 1 } }, /metadata/],
    [{ name: 'Calls', type: 'metered' }, /meter_id is required for metered features/],
    [{ ...metered, meter_id: 'meter_unknown' }, /meter_id: meter meter_unknown not found/],
    [{ ...metered, meter_id: otherMeter.id }, /meter_id: meter .* not found/],
    [{ ...metered, meter_id: devMeter.id }, /meter_id: meter .* not found/],
    [{ ...metered, meter_id: archivedMeter.id }, /meter_id: meter .* is archived/],
    [{ name: 'X', type: 'boolean', meter_id: meter.id }, /meter_id is only allowed on metered features, not boolean/],
    [{ name: 'X', type: 'static', alert_settings: alerts }, /alert_settings is only allowed on metered features, not static/],
    [{ name: 'X', type: 'boolean', reporting_unit: gb }, /reporting_unit is only allowed on metered features/],
    [{ name: 'X', type: 'boolean', unit_singular: 'seat' }, /unit_singular and unit_plural must be set together/],
    [{ name: 'X', type: 'boolean', unit_plural: 'seats' }, /unit_singular and unit_plural must be set together/],
    [{ ...metered, alert_settings: { alert_enabled: true, warning: { threshold: 5 } } }, /alert_settings.critical is required when alerts are enabled/],
    [{ ...metered, alert_settings: { ...alerts, warning: { threshold: 1000 } } }, /alert_settings.warning.threshold must be below alert_settings.critical.threshold/],
    [{ ...metered, alert_settings: { critical: { threshold: 10 }, info: { threshold: 20 } } }, /alert_settings.info.threshold must be below alert_settings.critical.threshold/],
    [{ ...metered, alert_settings: { critical: { threshold: -1 } } }, /alert_settings.critical.threshold/],
    [{ ...metered, alert_settings: { critical: { threshold: 1.5 } } }, /alert_settings.critical.threshold/],
    [{ ...metered, reporting_unit: { ...gb, conversion_rate: 0 } }, /reporting_unit.conversion_rate/],
    [{ ...metered, reporting_unit: { conversion_rate: 10, unit_singular: 'GB' } }, /reporting_unit.unit_plural/],
    [{ name: 'X', type: 'boolean', group_id: 'group_unknown' }, /group_id: group group_unknown not found/],
  ]
  for (const [body, message] of cases) {
    assertError(await t.api.post('/v1/features', body), 400, 'validation_error', message)
  }
  assert.equal(await rowCount(p, 'features', t.tenantId), 0)
  assert.equal((await t.api.get('/v1/features')).body.pagination.total, 0)
})

test('list filters by type, lookup_key and meter_id, pages with limit/offset and hides archived features', async () => {
  const t = await p.newTenant()
  const m1 = await newMeter(t.api, 'a')
  const m2 = await newMeter(t.api, 'b')
  const a = await newFeature(t.api, { name: 'A', type: 'metered', meter_id: m1.id })
  const b = await newFeature(t.api, { name: 'B', type: 'boolean' })
  const c = await newFeature(t.api, { name: 'C', type: 'metered', meter_id: m2.id })
  const d = await newFeature(t.api, { name: 'D', type: 'static' })
  const gone = await newFeature(t.api, { name: 'E', type: 'metered', meter_id: m1.id })
  assert.equal((await t.api.delete(`/v1/features/${gone.id}`)).status, 200)
  const list = async (q: string) => (await t.api.get(`/v1/features${q}`)).body
  const ids = async (q: string) => (await list(q)).items.map((f: any) => f.id)

  const all = await list('')
  assert.deepEqual(all.items.map((f: any) => f.id), [a.id, b.id, c.id, d.id])
  assert.deepEqual(all.items[0], a)
  assert.deepEqual(all.pagination, { limit: 50, offset: 0, total: 4 })
  assert.deepEqual(await ids('?type=metered'), [a.id, c.id])
  assert.deepEqual(await ids('?type=static'), [d.id])
  assert.deepEqual(await ids('?lookup_key=b'), [b.id])
  assert.deepEqual(await ids('?lookup_key=e'), [])
  assert.deepEqual(await ids(`?meter_id=${m1.id}`), [a.id])
  assert.deepEqual(await ids(`?meter_id=${m1.id}&type=boolean`), [])
  const page = await list('?limit=2&offset=1')
  assert.deepEqual(page.items.map((f: any) => f.id), [b.id, c.id])
  assert.deepEqual(page.pagination, { limit: 2, offset: 1, total: 4 })
  assert.deepEqual((await list('?limit=2&offset=4')).items, [])
  assertError(await t.api.get('/v1/features?type=counter'), 400, 'validation_error', /type/)
  assertError(await t.api.get('/v1/features?limit=0'), 400, 'validation_error', /limit/)
  assertError(await t.api.get('/v1/features?offset=-1'), 400, 'validation_error', /offset/)
  assertError(await t.api.get('/v1/features?status=archived'), 400, 'validation_error', /status/)
})

describe('update', () => {
  test('changes only the given fields; null clears; metadata is replaced', async () => {
    const t = await p.newTenant()
    const meter = await newMeter(t.api)
    const f = await newFeature(t.api, {
      name: 'Storage', type: 'metered', meter_id: meter.id, description: 'old', unit_singular: 'byte', unit_plural: 'bytes',
      alert_settings: alerts, metadata: { a: '1' },
    })
    const res = await t.api.put(`/v1/features/${f.id}`, {
      name: 'Disk', description: null, reporting_unit: gb, alert_settings: null, metadata: { b: '2' },
    })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, {
      ...f, name: 'Disk', description: null, reporting_unit: gb, alert_settings: null, metadata: { b: '2' }, updated_at: res.body.updated_at,
    })
    assert.ok(res.body.updated_at >= f.updated_at)
    assert.deepEqual((await t.api.get(`/v1/features/${f.id}`)).body, res.body)
    const units = await t.api.put(`/v1/features/${f.id}`, { unit_singular: null, unit_plural: null })
    assert.equal(units.body.unit_singular, null)
    assert.equal(units.body.unit_plural, null)
    assert.deepEqual((await eventsFor(p, f.id)).map((e) => e.event_name), ['feature.created', 'feature.updated', 'feature.updated'])
  })

  test('type, meter_id and lookup_key are fixed; the type rules apply to the updated feature', async () => {
    const t = await p.newTenant()
    const meter = await newMeter(t.api)
    const flag = await newFeature(t.api, { name: 'Flag', type: 'boolean', unit_singular: 'seat', unit_plural: 'seats' })
    const metered = await newFeature(t.api, { name: 'Calls', type: 'metered', meter_id: meter.id, alert_settings: alerts })
    assertError(await t.api.put(`/v1/features/${flag.id}`, { type: 'static' }), 400, 'validation_error', /type/)
    assertError(await t.api.put(`/v1/features/${flag.id}`, { lookup_key: 'new' }), 400, 'validation_error', /lookup_key/)
    assertError(await t.api.put(`/v1/features/${metered.id}`, { meter_id: meter.id }), 400, 'validation_error', /meter_id/)
    assertError(await t.api.put(`/v1/features/${flag.id}`, { alert_settings: alerts }), 400, 'validation_error', /alert_settings is only allowed on metered/)
    assertError(await t.api.put(`/v1/features/${flag.id}`, { unit_plural: null }), 400, 'validation_error', /unit_singular and unit_plural must be set together/)
    assertError(await t.api.put(`/v1/features/${flag.id}`, { name: ' ' }), 400, 'validation_error', /name/)
    assertError(
      await t.api.put(`/v1/features/${metered.id}`, { alert_settings: { alert_enabled: true, info: { threshold: 1 } } }),
      400, 'validation_error', /alert_settings.critical is required/,
    )
    assertError(await t.api.put('/v1/features/feat_unknown', { name: 'x' }), 404, 'not_found')
    // Nothing changed.
    assert.deepEqual((await t.api.get(`/v1/features/${flag.id}`)).body, flag)
    assert.deepEqual((await t.api.get(`/v1/features/${metered.id}`)).body, metered)
    assert.deepEqual((await eventsFor(p, flag.id)).map((e) => e.event_name), ['feature.created'])
  })
})

test('delete archives: still readable by id, gone from lists, unchangeable; repeating is a no-op', async () => {
  const t = await p.newTenant()
  const f = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
  const del = await t.api.delete(`/v1/features/${f.id}`)
  assert.equal(del.status, 200)
  assert.deepEqual(del.body, { message: `${f.id} deleted` })
  const archived = (await t.api.get(`/v1/features/${f.id}`)).body
  assert.deepEqual(archived, { ...f, status: 'archived', updated_at: archived.updated_at })
  assert.deepEqual((await t.api.get('/v1/features')).body.items, [])
  assertError(await t.api.put(`/v1/features/${f.id}`, { name: 'again' }), 400, 'invalid_operation', /archived/)
  assert.equal((await t.api.delete(`/v1/features/${f.id}`)).status, 200)
  assert.deepEqual((await eventsFor(p, f.id)).map((e) => e.event_name), ['feature.created', 'feature.deleted'])
  assertError(await t.api.delete('/v1/features/feat_unknown'), 404, 'not_found')
})

test("features of another tenant or environment answer 404 and are never listed or changed", async () => {
  const a = await p.newTenant('A')
  const b = await p.newTenant('B')
  const dev = p.client(a.apiKey, a.environments.development)
  const meter = await newMeter(a.api)
  const f = await newFeature(a.api, { name: 'Calls', type: 'metered', meter_id: meter.id })
  for (const api of [b.api, dev]) {
    assertError(await api.get(`/v1/features/${f.id}`), 404, 'not_found')
    assertError(await api.put(`/v1/features/${f.id}`, { name: 'hijacked' }), 404, 'not_found')
    assertError(await api.delete(`/v1/features/${f.id}`), 404, 'not_found')
    assert.deepEqual((await api.get('/v1/features')).body.items, [])
    assert.deepEqual((await api.get(`/v1/features?meter_id=${meter.id}`)).body.items, [])
  }
  // Same name and key elsewhere are independent records.
  const bf = await created(b.api.post('/v1/features', { name: 'Calls', type: 'boolean', lookup_key: f.lookup_key }))
  assert.equal(bf.tenant_id, b.tenantId)
  const df = await created(dev.post('/v1/features', { name: 'Calls', type: 'boolean' }))
  assert.equal(df.environment_id, a.environments.development)
  assert.equal(df.lookup_key, 'calls')
  assert.deepEqual((await a.api.get(`/v1/features/${f.id}`)).body, f)
  assert.deepEqual((await a.api.get('/v1/features')).body.items.map((x: any) => x.id), [f.id])
})
