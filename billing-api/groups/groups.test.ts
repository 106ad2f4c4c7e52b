// Groups over HTTP: price and feature groups, membership validated in scope, features.group_id
// kept in step with the group's entity_ids from both sides, lookup keys, isolation.
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError, common, eventsFor, flatMonthly, newFeature, newPlan, rowCount } from '../features/test-kit.js'

const p = usePlatform()

const newGroup = (api: ApiClient, body: Record<string, unknown>) => created(api.post('/v1/groups', body))
const groupIdOf = async (api: ApiClient, featureId: string) => (await api.get(`/v1/features/${featureId}`)).body.group_id
const membersOf = async (api: ApiClient, groupId: string) => (await api.get(`/v1/groups/${groupId}`)).body.entity_ids

describe('create and read', () => {
  test('a feature group lists its features, and each feature names the group', async () => {
    const t = await p.newTenant()
    const sso = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
    const audit = await newFeature(t.api, { name: 'Audit log', type: 'boolean' })
    const res = await t.api.post('/v1/groups', {
      name: 'Security', lookup_key: 'security', entity_type: 'feature', entity_ids: [audit.id, sso.id], metadata: { team: 'sec' },
    })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    const g = res.body
    assert.match(g.id, /^group_[0-9A-Z]{26}$/)
    assert.deepEqual(g, {
      ...common(g, t.tenantId, t.environments.production, t.userId),
      metadata: { team: 'sec' }, name: 'Security', lookup_key: 'security', entity_type: 'feature', entity_ids: [audit.id, sso.id],
    })
    assert.deepEqual((await t.api.get(`/v1/groups/${g.id}`)).body, g)
    assert.equal(await groupIdOf(t.api, sso.id), g.id)
    assert.equal(await groupIdOf(t.api, audit.id), g.id)
    const events = await eventsFor(p, g.id)
    assert.deepEqual(events.map((e) => e.event_name), ['group.created'])
    assert.deepEqual(events[0].payload, g)
  })

  test('a price group lists prices of plans in scope; lookup_key and entity_ids are optional', async () => {
    const t = await p.newTenant()
    const plan = await newPlan(t.api, { prices: [flatMonthly('10'), flatMonthly('20')] })
    const [p1, p2] = plan.prices.map((x: any) => x.id)
    const g = await newGroup(t.api, { name: 'Base fees', entity_type: 'price', entity_ids: [p2, p1] })
    assert.equal(g.lookup_key, null)
    assert.deepEqual(g.entity_ids, [p2, p1])
    const empty = await newGroup(t.api, { name: 'Empty', entity_type: 'feature' })
    assert.deepEqual(empty.entity_ids, [])
    assert.equal(empty.lookup_key, null)
  })
})

test('invalid groups are rejected with validation_error and nothing is written', async () => {
  const t = await p.newTenant()
  const other = await p.newTenant('other')
  const dev = p.client(t.apiKey, t.environments.development)
  const feature = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
  const otherFeature = await newFeature(other.api, { name: 'SSO', type: 'boolean' })
  const devFeature = await newFeature(dev, { name: 'SSO', type: 'boolean' })
  const plan = await newPlan(t.api, { prices: [flatMonthly('10')] })
  const price = plan.prices[0].id
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ entity_type: 'feature' }, /name/],
    [{ name: ' ', entity_type: 'feature' }, /name/],
    [{ name: 'G' }, /entity_type/],
    [{ name: 'G', entity_type: 'plan' }, /entity_type/],
    [{ name: 'G', entity_type: 'feature', lookup_key: 'a b' }, /lookup_key/],
    [{ name: 'G', entity_type: 'feature', entity_ids: [feature.id, feature.id] }, /entity_ids/],
    [{ name: 'G', entity_type: 'feature', entity_ids: 'x' }, /entity_ids/],
    [{ name: 'G', entity_type: 'feature', extra: true }, /extra/],
    [{ name: 'G', entity_type: 'feature', entity_ids: ['feat_unknown'] }, /entity_ids: feature feat_unknown not found/],
    [{ name: 'G', entity_type: 'feature', entity_ids: [feature.id, price] }, new RegExp(`entity_ids: feature ${price} not found`)],
    [{ name: 'G', entity_type: 'feature', entity_ids: [otherFeature.id] }, /entity_ids: feature .* not found/],
    [{ name: 'G', entity_type: 'feature', entity_ids: [devFeature.id] }, /entity_ids: feature .* not found/],
    [{ name: 'G', entity_type: 'price', entity_ids: [price, feature.id] }, new RegExp(`entity_ids: price ${feature.id} not found`)],
  ]
  for (const [body, message] of cases) assertError(await t.api.post('/v1/groups', body), 400, 'validation_error', message)
  assert.equal(await rowCount(p, 'groups', t.tenantId), 0)
  assert.equal(await groupIdOf(t.api, feature.id), null)
})

test('lookup keys are unique per environment among groups that are not deleted', async () => {
  const t = await p.newTenant()
  const g = await newGroup(t.api, { name: 'A', entity_type: 'feature', lookup_key: 'addons' })
  assertError(await t.api.post('/v1/groups', { name: 'B', entity_type: 'price', lookup_key: 'addons' }), 409, 'already_exists', /lookup_key addons/)
  assert.equal(await rowCount(p, 'groups', t.tenantId), 1)
  assert.equal((await newGroup(p.client(t.apiKey, t.environments.development), { name: 'A', entity_type: 'feature', lookup_key: 'addons' })).lookup_key, 'addons')
  assert.equal((await t.api.delete(`/v1/groups/${g.id}`)).status, 204)
  assert.equal((await newGroup(t.api, { name: 'A2', entity_type: 'feature', lookup_key: 'addons' })).lookup_key, 'addons')
})

describe('membership stays in step from both sides', () => {
  test('setting a feature group_id adds it to the group; moving or clearing takes it out of the old one', async () => {
    const t = await p.newTenant()
    const g1 = await newGroup(t.api, { name: 'G1', entity_type: 'feature' })
    const g2 = await newGroup(t.api, { name: 'G2', entity_type: 'feature' })
    const f = await newFeature(t.api, { name: 'SSO', type: 'boolean', group_id: g1.id })
    assert.equal(f.group_id, g1.id)
    assert.deepEqual(await membersOf(t.api, g1.id), [f.id])
    assert.equal((await t.api.put(`/v1/features/${f.id}`, { group_id: g2.id })).body.group_id, g2.id)
    assert.deepEqual(await membersOf(t.api, g1.id), [])
    assert.deepEqual(await membersOf(t.api, g2.id), [f.id])
    assert.equal((await t.api.put(`/v1/features/${f.id}`, { group_id: null })).body.group_id, null)
    assert.deepEqual(await membersOf(t.api, g2.id), [])
  })

  test('a feature cannot join a price group, a deleted group or a group of another scope', async () => {
    const t = await p.newTenant()
    const other = await p.newTenant('other')
    const prices = await newGroup(t.api, { name: 'P', entity_type: 'price' })
    const deleted = await newGroup(t.api, { name: 'D', entity_type: 'feature' })
    await t.api.delete(`/v1/groups/${deleted.id}`)
    const foreign = await newGroup(other.api, { name: 'F', entity_type: 'feature' })
    const dev = await newGroup(p.client(t.apiKey, t.environments.development), { name: 'F', entity_type: 'feature' })
    assertError(await t.api.post('/v1/features', { name: 'X', type: 'boolean', group_id: prices.id }), 400, 'validation_error', /group_id: group .* groups prices, not features/)
    for (const g of [deleted, foreign, dev]) {
      assertError(await t.api.post('/v1/features', { name: 'X', type: 'boolean', group_id: g.id }), 400, 'validation_error', /group_id: group .* not found/)
    }
    assert.equal(await rowCount(p, 'features', t.tenantId), 0)
    const f = await newFeature(t.api, { name: 'X', type: 'boolean' })
    assertError(await t.api.put(`/v1/features/${f.id}`, { group_id: prices.id }), 400, 'validation_error', /not features/)
    assert.equal(await groupIdOf(t.api, f.id), null)
    assert.deepEqual(await membersOf(t.api, prices.id), [])
    assert.deepEqual(await membersOf(other.api, foreign.id), [])
  })

  test('replacing entity_ids releases dropped features and takes added ones from their old group', async () => {
    const t = await p.newTenant()
    const [a, b, c] = await Promise.all(['A', 'B', 'C'].map((name) => newFeature(t.api, { name, type: 'boolean' })))
    const g1 = await newGroup(t.api, { name: 'G1', entity_type: 'feature', entity_ids: [a.id, b.id] })
    const g2 = await newGroup(t.api, { name: 'G2', entity_type: 'feature', entity_ids: [c.id] })
    const res = await t.api.put(`/v1/groups/${g2.id}`, { entity_ids: [b.id, c.id], name: 'Second' })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body, { ...g2, name: 'Second', entity_ids: [b.id, c.id], updated_at: res.body.updated_at })
    assert.deepEqual(await membersOf(t.api, g1.id), [a.id])
    assert.equal(await groupIdOf(t.api, b.id), g2.id)
    await t.api.put(`/v1/groups/${g2.id}`, { entity_ids: [b.id] })
    assert.equal(await groupIdOf(t.api, c.id), null)
    assert.equal(await groupIdOf(t.api, b.id), g2.id)
    // A rejected update changes nothing.
    assertError(await t.api.put(`/v1/groups/${g2.id}`, { entity_ids: [a.id, 'feat_unknown'] }), 400, 'validation_error', /feat_unknown/)
    assert.deepEqual(await membersOf(t.api, g1.id), [a.id])
    assert.deepEqual(await membersOf(t.api, g2.id), [b.id])
    assert.equal(await groupIdOf(t.api, a.id), g1.id)
  })

  test('deleting a group releases its features', async () => {
    const t = await p.newTenant()
    const f = await newFeature(t.api, { name: 'SSO', type: 'boolean' })
    const g = await newGroup(t.api, { name: 'G', entity_type: 'feature', entity_ids: [f.id] })
    assert.equal((await t.api.delete(`/v1/groups/${g.id}`)).status, 204)
    assert.equal(await groupIdOf(t.api, f.id), null)
    assertError(await t.api.get(`/v1/groups/${g.id}`), 404, 'not_found')
    assertError(await t.api.put(`/v1/groups/${g.id}`, { name: 'x' }), 404, 'not_found')
    assertError(await t.api.delete(`/v1/groups/${g.id}`), 404, 'not_found')
    assert.deepEqual((await eventsFor(p, g.id)).map((e) => e.event_name), ['group.created', 'group.deleted'])
  })
})

test('update changes name and metadata; entity_type and lookup_key are fixed', async () => {
  const t = await p.newTenant()
  const g = await newGroup(t.api, { name: 'G', entity_type: 'price', lookup_key: 'g', metadata: { a: '1' } })
  const res = await t.api.put(`/v1/groups/${g.id}`, { name: 'Renamed', metadata: { b: '2' } })
  assert.deepEqual(res.body, { ...g, name: 'Renamed', metadata: { b: '2' }, updated_at: res.body.updated_at })
  assertError(await t.api.put(`/v1/groups/${g.id}`, { entity_type: 'feature' }), 400, 'validation_error', /entity_type/)
  assertError(await t.api.put(`/v1/groups/${g.id}`, { lookup_key: 'h' }), 400, 'validation_error', /lookup_key/)
  assertError(await t.api.put(`/v1/groups/${g.id}`, { entity_ids: ['price_unknown'] }), 400, 'validation_error', /price price_unknown not found/)
  assert.deepEqual((await t.api.get(`/v1/groups/${g.id}`)).body, res.body)
  assert.deepEqual((await eventsFor(p, g.id)).map((e) => e.event_name), ['group.created', 'group.updated'])
})

test('list filters by entity_type and lookup_key, pages, and hides deleted groups', async () => {
  const t = await p.newTenant()
  const a = await newGroup(t.api, { name: 'A', entity_type: 'price', lookup_key: 'a' })
  const b = await newGroup(t.api, { name: 'B', entity_type: 'feature' })
  const c = await newGroup(t.api, { name: 'C', entity_type: 'feature', lookup_key: 'c' })
  const d = await newGroup(t.api, { name: 'D', entity_type: 'price' })
  await t.api.delete(`/v1/groups/${d.id}`)
  const list = async (q = '') => (await t.api.get(`/v1/groups${q}`)).body
  const ids = async (q: string) => (await list(q)).items.map((g: any) => g.id)
  const all = await list()
  assert.deepEqual(all.items, [a, b, c])
  assert.deepEqual(all.pagination, { limit: 50, offset: 0, total: 3 })
  assert.deepEqual(await ids('?entity_type=feature'), [b.id, c.id])
  assert.deepEqual(await ids('?entity_type=price'), [a.id])
  assert.deepEqual(await ids('?lookup_key=c'), [c.id])
  assert.deepEqual(await list('?limit=1&offset=1'), { items: [b], pagination: { limit: 1, offset: 1, total: 3 } })
  assertError(await t.api.get('/v1/groups?entity_type=plan'), 400, 'validation_error', /entity_type/)
  assertError(await t.api.get('/v1/groups?limit=1001'), 400, 'validation_error', /limit/)
})

test('groups of another tenant or environment answer 404 and are never listed or changed', async () => {
  const a = await p.newTenant('A')
  const b = await p.newTenant('B')
  const dev = p.client(a.apiKey, a.environments.development)
  const f = await newFeature(a.api, { name: 'SSO', type: 'boolean' })
  const g = await newGroup(a.api, { name: 'G', entity_type: 'feature', lookup_key: 'g', entity_ids: [f.id] })
  for (const api of [b.api, dev]) {
    assertError(await api.get(`/v1/groups/${g.id}`), 404, 'not_found')
    assertError(await api.put(`/v1/groups/${g.id}`, { entity_ids: [] }), 404, 'not_found')
    assertError(await api.delete(`/v1/groups/${g.id}`), 404, 'not_found')
    assert.deepEqual((await api.get('/v1/groups')).body.items, [])
    assert.equal((await newGroup(api, { name: 'G', entity_type: 'feature', lookup_key: 'g' })).lookup_key, 'g')
  }
  assert.deepEqual((await a.api.get(`/v1/groups/${g.id}`)).body, g)
  assert.equal(await groupIdOf(a.api, f.id), g.id)
})
