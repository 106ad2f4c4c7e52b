// Plans and their prices: CRUD, search, price sequences, validation (spec Errors 9 at create
// and update), lookup_key conflicts, and tenant + environment isolation.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { created } from '../../test/support/fixtures.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { assertError, countRows } from '../../test/support/assertions.js'

const p = usePlatform()

const fixed = (amount: string, extra: object = {}) =>
  ({ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount, billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', ...extra })
const usage = (meterId: string, extra: object = {}) =>
  ({ type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'USD', amount: '0.5', meter_id: meterId, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', ...extra })

async function meter(api: ApiClient): Promise<string> {
  return (await created(api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))).id
}

const ids = (items: { id: string }[]) => items.map((x) => x.id)

test('plan create, get, update, archive', async () => {
  const { api, tenantId, environments, userId } = await p.newTenant()
  const meterId = await meter(api)
  const plan = await created(api.post('/v1/plans', {
    name: 'Pro', lookup_key: 'pro', description: 'For teams', display_order: 2, metadata: { segment: 'smb' },
    prices: [fixed('49'), usage(meterId, { display_name: 'Calls', lookup_key: 'pro-calls' })],
  }))
  assert.match(plan.id, /^plan_/)
  assert.equal(plan.tenant_id, tenantId)
  assert.equal(plan.environment_id, environments.production)
  assert.equal(plan.created_by, userId)
  assert.deepEqual(
    [plan.name, plan.lookup_key, plan.description, plan.display_order, plan.status, plan.max_price_sequence, plan.credit_grants],
    ['Pro', 'pro', 'For teams', 2, 'published', 2, []],
  )
  assert.deepEqual(plan.metadata, { segment: 'smb' })
  assert.deepEqual(plan.prices.map((x: any) => [x.sequence, x.type, x.amount, x.entity_type, x.entity_id, x.lookup_key, x.price_unit]), [
    [1, 'FIXED', '49', 'PLAN', plan.id, null, null],
    [2, 'USAGE', '0.5', 'PLAN', plan.id, 'pro-calls', null],
  ])
  const read = (await api.get(`/v1/plans/${plan.id}`)).body
  assert.deepEqual(read, plan)

  const updated = await api.put(`/v1/plans/${plan.id}`, { name: 'Pro 2', description: 'Bigger', display_order: 1, lookup_key: 'pro-2', metadata: { segment: 'mid' } })
  assert.equal(updated.status, 200, JSON.stringify(updated.body))
  assert.deepEqual(
    [updated.body.name, updated.body.description, updated.body.display_order, updated.body.lookup_key, updated.body.metadata],
    ['Pro 2', 'Bigger', 1, 'pro-2', { segment: 'mid' }],
  )
  assert.deepEqual(ids(updated.body.prices), ids(plan.prices))
  assert.deepEqual((await api.get(`/v1/plans/${plan.id}`)).body, updated.body)

  assert.equal((await api.delete(`/v1/plans/${plan.id}`)).status, 200)
  const archived = (await api.get(`/v1/plans/${plan.id}`)).body
  assert.equal(archived.status, 'archived')
  assert.deepEqual(ids(archived.prices), ids(plan.prices), 'archiving keeps the prices subscriptions bill')
  assert.deepEqual((await api.get('/v1/plans')).body.items, [])
  assert.deepEqual(ids((await api.post('/v1/plans/search', { status: 'archived' })).body.items), [plan.id])
  assertError(await api.get('/v1/plans/plan_unknown'), 404, 'not_found')
  assertError(await api.put('/v1/plans/plan_unknown', { name: 'x' }), 404, 'not_found')
  assertError(await api.delete('/v1/plans/plan_unknown'), 404, 'not_found')
})

test('plan lookup_key is unique per environment (409) on create and update; bad input writes nothing', async () => {
  const { api, apiKey, environments, tenantId } = await p.newTenant()
  const basic = await created(api.post('/v1/plans', { name: 'Basic', lookup_key: 'basic' }))
  const pro = await created(api.post('/v1/plans', { name: 'Pro', lookup_key: 'pro' }))
  const plans = await countRows(p, 'plans', tenantId)
  const prices = await countRows(p, 'prices', tenantId)
  assertError(await api.post('/v1/plans', { name: 'Again', lookup_key: 'basic', prices: [fixed('1')] }), 409, 'already_exists', /lookup_key basic/)
  assertError(await api.put(`/v1/plans/${pro.id}`, { lookup_key: 'basic' }), 409, 'already_exists', /lookup_key basic/)
  assert.equal((await api.put(`/v1/plans/${basic.id}`, { lookup_key: 'basic', name: 'Basic!' })).status, 200)
  for (const body of [{ name: '' }, { display_order: 1.5 }, { lookup_key: '' }, { metadata: { a: 1 } }, { prices: [] }, { status: 'published' }]) {
    assertError(await api.put(`/v1/plans/${pro.id}`, body), 400, 'validation_error')
  }
  assertError(await api.post('/v1/plans', {}), 400, 'validation_error', /name/)
  assert.equal(await countRows(p, 'plans', tenantId), plans)
  assert.equal(await countRows(p, 'prices', tenantId), prices)
  assert.equal((await api.get(`/v1/plans/${pro.id}`)).body.lookup_key, 'pro')
  await created(p.client(apiKey, environments.development).post('/v1/plans', { name: 'Basic', lookup_key: 'basic' }))
})

test('plan search: metadata filters, lookup_key, order by display_order then created_at, pagination', async () => {
  const { api } = await p.newTenant()
  const plan = (name: string, display_order: number, metadata: object) => created(api.post('/v1/plans', { name, display_order, metadata, lookup_key: name }))
  const c = await plan('c', 2, { tier: 'gold', region: 'eu' })
  const a = await plan('a', 1, { tier: 'gold', region: 'us' })
  const b = await plan('b', 2, { tier: 'silver', region: 'eu' })
  const d = await plan('d', 0, {})
  const gone = await plan('e', 0, { tier: 'gold', region: 'eu' })
  await api.delete(`/v1/plans/${gone.id}`)
  await created(api.post('/v1/prices', { ...fixed('5'), entity_type: 'PLAN', entity_id: a.id }))
  const search = async (body: object) => {
    const r = await api.post('/v1/plans/search', body)
    assert.equal(r.status, 200, JSON.stringify(r.body))
    return r.body
  }
  assert.deepEqual(ids((await search({})).items), [d.id, a.id, c.id, b.id])
  assert.deepEqual(ids((await api.get('/v1/plans')).body.items), [d.id, a.id, c.id, b.id])
  const getPage = (await api.get('/v1/plans?limit=2&offset=1')).body
  assert.deepEqual(ids(getPage.items), [a.id, c.id])
  assert.deepEqual(getPage.pagination, { limit: 2, offset: 1, total: 4 })
  assert.deepEqual((await search({ filters: { metadata: { tier: 'gold' } } })).items.map((x: any) => [x.id, x.prices.length]), [[a.id, 1], [c.id, 0]])
  assert.deepEqual(ids((await search({ filters: { metadata: { tier: 'gold', region: 'eu' } } })).items), [c.id])
  assert.deepEqual(ids((await search({ filters: { metadata: { region: 'eu' } }, status: 'archived' })).items), [gone.id])
  assert.deepEqual(ids((await search({ lookup_key: 'b' })).items), [b.id])
  const page = await search({ filters: { metadata: { region: 'eu' } }, limit: 1, offset: 1 })
  assert.deepEqual(ids(page.items), [b.id])
  assert.deepEqual(page.pagination, { limit: 1, offset: 1, total: 2 })
  assert.equal((await search({})).items[0].credit_grants, null, 'list items are summaries')
  assertError(await api.post('/v1/plans/search', { limit: 1001 }), 400, 'validation_error', /limit/)
  assertError(await api.post('/v1/plans/search', { offset: -1 }), 400, 'validation_error', /offset/)
  assertError(await api.post('/v1/plans/search', { filters: { metadata: { tier: ['gold'] } } }), 400, 'validation_error', /filters\.metadata\.tier/)
  assertError(await api.post('/v1/plans/search', { name: 'a' }), 400, 'validation_error', /name/)
})

test('prices: add to a plan with the next sequence, read, list, update, archive', async () => {
  const { api, userId } = await p.newTenant()
  const meterId = await meter(api)
  const plan = await created(api.post('/v1/plans', { name: 'Plan', prices: [fixed('10')] }))
  const added = await created(api.post('/v1/prices', { ...usage(meterId), entity_type: 'PLAN', entity_id: plan.id, lookup_key: 'calls', display_name: 'Calls', metadata: { k: 'v' } }))
  assert.match(added.id, /^price_/)
  assert.deepEqual(
    [added.entity_type, added.entity_id, added.sequence, added.type, added.amount, added.currency, added.meter_id, added.invoice_cadence, added.status, added.created_by],
    ['PLAN', plan.id, 2, 'USAGE', '0.5', 'USD', meterId, 'ARREAR', 'published', userId],
  )
  assert.deepEqual((await api.get(`/v1/prices/${added.id}`)).body, added)
  assert.equal((await api.get(`/v1/plans/${plan.id}`)).body.max_price_sequence, 2)

  // An archived price's sequence is not reused.
  assert.equal((await api.delete(`/v1/prices/${added.id}`)).status, 200)
  assert.equal((await api.get(`/v1/prices/${added.id}`)).body.status, 'archived')
  const third = await created(api.post('/v1/prices', { ...fixed('3', { billing_period: 'ANNUAL' }), entity_type: 'PLAN', entity_id: plan.id }))
  assert.equal(third.sequence, 3)
  const read = (await api.get(`/v1/plans/${plan.id}`)).body
  assert.equal(read.max_price_sequence, 3)
  assert.deepEqual(read.prices.map((x: any) => x.sequence), [1, 3])

  const listed = (await api.get(`/v1/prices?entity_type=PLAN&entity_id=${plan.id}`)).body
  assert.deepEqual(listed.items.map((x: any) => x.sequence), [1, 3])
  assert.deepEqual(listed.pagination, { limit: 50, offset: 0, total: 2 })
  assert.deepEqual((await api.get(`/v1/prices?entity_id=${plan.id}&status=archived`)).body.items.map((x: any) => x.id), [added.id])
  assert.deepEqual((await api.get('/v1/prices?entity_type=ADDON')).body.items, [])
  assert.equal((await api.get('/v1/prices')).body.pagination.total, 2)
  const pricePage = (await api.get(`/v1/prices?entity_id=${plan.id}&limit=1&offset=1`)).body
  assert.deepEqual([pricePage.items.map((x: any) => x.sequence), pricePage.pagination], [[3], { limit: 1, offset: 1, total: 2 }])

  const updated = await api.put(`/v1/prices/${third.id}`, { display_name: 'Yearly', description: 'Paid yearly', lookup_key: 'yearly', metadata: { a: 'b' }, invoice_cadence: 'ARREAR' })
  assert.equal(updated.status, 200, JSON.stringify(updated.body))
  assert.deepEqual(
    [updated.body.display_name, updated.body.description, updated.body.lookup_key, updated.body.metadata, updated.body.invoice_cadence, updated.body.amount, updated.body.sequence],
    ['Yearly', 'Paid yearly', 'yearly', { a: 'b' }, 'ARREAR', '3', 3],
  )
  assert.deepEqual((await api.get(`/v1/prices/${third.id}`)).body, updated.body)
  assertError(await api.get('/v1/prices/price_unknown'), 404, 'not_found')
  assertError(await api.put('/v1/prices/price_unknown', { display_name: 'x' }), 404, 'not_found')
  assertError(await api.delete('/v1/prices/price_unknown'), 404, 'not_found')
})

test("Flexprice's price fields: billing_cadence and price_unit_type are checked; search, lookup and bulk create", async () => {
  const { api } = await p.newTenant()
  const meterId = await meter(api)
  const plan = await created(api.post('/v1/plans', { name: 'Plan' }))
  const other = await created(api.post('/v1/plans', { name: 'Other' }))
  const onPlan = { entity_type: 'PLAN', entity_id: plan.id }
  const fee = await created(api.post('/v1/prices', { ...fixed('20.00'), ...onPlan, billing_cadence: 'RECURRING', price_unit_type: 'FIAT', lookup_key: 'fee' }))
  assert.deepEqual(
    [fee.amount, fee.billing_cadence, fee.price_unit_type, fee.trial_period, fee.trial_period_days, fee.meter, fee.pricing_unit, fee.display_amount],
    ['20.00', 'RECURRING', 'FIAT', 0, 0, null, null, null],
  )
  assertError(await api.post('/v1/prices', { ...fixed('1'), ...onPlan, billing_cadence: 'ONETIME' }), 400, 'validation_error', /billing_cadence/)
  assertError(await api.post('/v1/prices', { ...fixed('1'), ...onPlan, price_unit_type: 'CUSTOM' }), 400, 'validation_error', /price_unit_type: CUSTOM requires price_unit_id/)

  assert.deepEqual((await api.get('/v1/prices/lookup/fee')).body, fee)
  assertError(await api.get('/v1/prices/lookup/nope'), 404, 'not_found', /price with lookup_key nope not found/)

  const bulk = await api.post('/v1/prices/bulk', { items: [{ ...usage(meterId, { amount: '0.01' }), ...onPlan }, { ...fixed('5'), entity_type: 'PLAN', entity_id: other.id }] })
  assert.equal(bulk.status, 201, JSON.stringify(bulk.body))
  assert.deepEqual(bulk.body.items.map((x: any) => [x.entity_id, x.amount, x.meter_id, x.sequence]), [[plan.id, '0.01', meterId, 2], [other.id, '5', null, 1]])
  const bad = await api.post('/v1/prices/bulk', { items: [fixed('1', onPlan), { ...fixed('2'), entity_type: 'PLAN', entity_id: 'plan_unknown' }] })
  assertError(bad, 400, 'validation_error', /items\[1\]\.entity_id/)
  assert.equal((await api.get(`/v1/prices?entity_id=${plan.id}`)).body.pagination.total, 2, 'a failed bulk create writes nothing')

  const search = async (body: object) => (await api.post('/v1/prices/search', body)).body.items.map((x: any) => x.id)
  assert.deepEqual(await search({ plan_ids: [plan.id] }), [fee.id, bulk.body.items[0].id])
  assert.deepEqual(await search({ plan_ids: [plan.id, other.id], meter_ids: [meterId], allow_expired_prices: false }), [bulk.body.items[0].id])
  assert.deepEqual(await search({ price_ids: [fee.id], entity_ids: [plan.id] }), [fee.id])
  assert.deepEqual(await search({ entity_ids: [other.id] }), [bulk.body.items[1].id])
  assertError(await api.post('/v1/prices/search', { plan_ids: [plan.id], entity_type: 'ADDON' }), 400, 'validation_error', /plan_ids/)
  assertError(await api.post('/v1/prices/search', { expand: 'meters' }), 400, 'validation_error', /expand/)
})

test('concurrent price additions to one plan get distinct, consecutive sequences', async () => {
  const { api } = await p.newTenant()
  const plan = await created(api.post('/v1/plans', { name: 'Busy', prices: [fixed('1'), fixed('2')] }))
  const results = await Promise.all(
    Array.from({ length: 12 }, (_, i) => api.post('/v1/prices', { ...fixed(String(i)), entity_type: 'PLAN', entity_id: plan.id })),
  )
  assert.deepEqual(results.map((r) => r.status), Array(12).fill(201))
  assert.deepEqual(results.map((r) => r.body.sequence).sort((a, b) => a - b), Array.from({ length: 12 }, (_, i) => i + 3))
  const read = (await api.get(`/v1/plans/${plan.id}`)).body
  assert.equal(read.max_price_sequence, 14)
  assert.deepEqual(read.prices.map((x: any) => x.sequence), Array.from({ length: 14 }, (_, i) => i + 1))
})

test('usage prices are billed in arrear: rejected at create and at update (spec Errors 9)', async () => {
  const { api, tenantId } = await p.newTenant()
  const meterId = await meter(api)
  const plan = await created(api.post('/v1/plans', { name: 'Usage', prices: [usage(meterId)] }))
  const usagePrice = plan.prices[0]
  const prices = await countRows(p, 'prices', tenantId)
  assertError(await api.post('/v1/prices', { ...usage(meterId, { invoice_cadence: 'ADVANCE' }), entity_type: 'PLAN', entity_id: plan.id }), 400, 'validation_error', /^invoice_cadence: usage-based prices must be billed in ARREAR/)
  assertError(await api.post('/v1/plans', { name: 'bad', prices: [usage(meterId, { invoice_cadence: 'ADVANCE' })] }), 400, 'validation_error', /^prices\[0\]\.invoice_cadence/)
  assertError(await api.put(`/v1/prices/${usagePrice.id}`, { invoice_cadence: 'ADVANCE', display_name: 'sneaky' }), 400, 'validation_error', /^invoice_cadence: usage-based prices must be billed in ARREAR/)
  const after = (await api.get(`/v1/prices/${usagePrice.id}`)).body
  assert.equal(after.invoice_cadence, 'ARREAR')
  assert.equal(after.display_name, null)
  assert.equal(await countRows(p, 'prices', tenantId), prices)
  assert.equal((await api.get(`/v1/plans/${plan.id}`)).body.max_price_sequence, 1, 'a rejected price takes no sequence')
})

test('price validation names the field and writes nothing', async () => {
  const { api, tenantId } = await p.newTenant()
  const other = await p.newTenant()
  const meterId = await meter(api)
  const plan = await created(api.post('/v1/plans', { name: 'P', prices: [fixed('1', { lookup_key: 'taken' })] }))
  const archivedPlan = await created(api.post('/v1/plans', { name: 'Old' }))
  await api.delete(`/v1/plans/${archivedPlan.id}`)
  const foreignPlan = await created(other.api.post('/v1/plans', { name: 'Theirs' }))
  const foreignMeter = await meter(other.api)
  const onPlan = (price: object, entity_id = plan.id) => api.post('/v1/prices', { ...price, entity_type: 'PLAN', entity_id })
  const prices = await countRows(p, 'prices', tenantId)
  const cases: [Promise<any>, RegExp][] = [
    [api.post('/v1/prices', fixed('1')), /entity_type/],
    [api.post('/v1/prices', { ...fixed('1'), entity_type: 'PLAN' }), /entity_id/],
    [api.post('/v1/prices', { ...fixed('1'), entity_type: 'ADDON', entity_id: plan.id }), /entity_type/],
    [onPlan(fixed('1'), foreignPlan.id), /^entity_id: no published plan/],
    [onPlan(fixed('1'), archivedPlan.id), /^entity_id: no published plan/],
    [onPlan(fixed('1'), 'plan_unknown'), /^entity_id: no published plan/],
    [onPlan(usage(foreignMeter)), /^meter_id: meter .* not found/],
    [onPlan(usage(meterId, { meter_id: undefined })), /^meter_id is required/],
    [onPlan(fixed('1', { meter_id: meterId })), /^meter_id is only allowed on USAGE prices/],
    [onPlan(fixed('1', { amount: undefined })), /^amount is required/],
    [onPlan(fixed('1', { amount: 0.1 })), /amount must be string/],
    [onPlan(fixed('1', { amount: '-1' })), /amount must match pattern/],
    [onPlan(fixed('1', { currency: 'DOLLARS' })), /currency/],
    [onPlan(fixed('1', { billing_model: 'TIERED' })), /TIERED prices need tier_mode and tiers/],
    [onPlan(fixed('1', { billing_model: 'TIERED', tier_mode: 'SLAB', amount: undefined, tiers: [{ up_to: 10, unit_amount: '1' }, { up_to: 5, unit_amount: '1' }, { up_to: null, unit_amount: '1' }] })), /^tiers/],
    [onPlan(fixed('1', { billing_model: 'PACKAGE' })), /^transform_quantity/],
    [onPlan(fixed('1', { price_unit_amount: '5' })), /^price_unit_amount requires price_unit_id/],
    [onPlan(fixed('1', { sequence: 7 })), /sequence/],
  ]
  for (const [res, message] of cases) assertError(await res, 400, 'validation_error', message)
  assertError(await onPlan(fixed('1', { lookup_key: 'taken' })), 409, 'already_exists', /lookup_key taken/)
  assert.equal(await countRows(p, 'prices', tenantId), prices)
  assert.equal((await api.get(`/v1/plans/${plan.id}`)).body.max_price_sequence, 1)

  // Updates: lookup_key stays unique among non-deleted prices, only the listed fields change.
  const second = await created(onPlan(fixed('2', { lookup_key: 'second' })))
  assertError(await api.put(`/v1/prices/${second.id}`, { lookup_key: 'taken' }), 409, 'already_exists', /lookup_key taken/)
  await api.delete(`/v1/prices/${plan.prices[0].id}`)
  // An archived price keeps its lookup_key; only deletion frees it.
  assertError(await api.put(`/v1/prices/${second.id}`, { lookup_key: 'taken' }), 409, 'already_exists')
  for (const body of [{ amount: '5' }, { type: 'USAGE' }, { invoice_cadence: 'LATER' }, { lookup_key: '' }, { metadata: { n: 1 } }]) {
    assertError(await api.put(`/v1/prices/${second.id}`, body), 400, 'validation_error')
  }
  const unchanged = (await api.get(`/v1/prices/${second.id}`)).body
  assert.deepEqual([unchanged.lookup_key, unchanged.amount, unchanged.type], ['second', '2', 'FIXED'])
})

test("tenants and environments never see each other's plans and prices", async () => {
  const a = await p.newTenant()
  const b = await p.newTenant()
  const plan = await created(a.api.post('/v1/plans', { name: 'Mine', lookup_key: 'mine', metadata: { k: 'v' }, prices: [fixed('1', { lookup_key: 'mine-price' })] }))
  const price = plan.prices[0]
  for (const client of [b.api, p.client(a.apiKey, a.environments.development)]) {
    for (const path of [`/v1/plans/${plan.id}`, `/v1/prices/${price.id}`]) {
      assertError(await client.get(path), 404, 'not_found')
      assertError(await client.put(path, { description: 'hijacked' }), 404, 'not_found')
      assertError(await client.delete(path), 404, 'not_found')
    }
    assert.deepEqual((await client.get('/v1/plans')).body.items, [])
    assert.deepEqual((await client.post('/v1/plans/search', { filters: { metadata: { k: 'v' } } })).body.items, [])
    assert.deepEqual((await client.get(`/v1/prices?entity_id=${plan.id}`)).body.items, [])
    assertError(await client.post('/v1/prices', { ...fixed('1'), entity_type: 'PLAN', entity_id: plan.id }), 400, 'validation_error', /entity_id/)
    // Their own namespace for lookup keys.
    await created(client.post('/v1/plans', { name: 'Theirs', lookup_key: 'mine', prices: [fixed('1', { lookup_key: 'mine-price' })] }))
  }
  const mine = (await a.api.get(`/v1/plans/${plan.id}`)).body
  assert.deepEqual([mine.description, mine.status, mine.max_price_sequence], [null, 'published', 1])
  assert.equal((await a.api.get(`/v1/prices/${price.id}`)).body.status, 'published')
})
