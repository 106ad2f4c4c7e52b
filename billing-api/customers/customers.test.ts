// Customers: CRUD, search with metadata filters, integrations, external_id uniqueness, the
// customer.created outbox event, and tenant + environment isolation.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { newId } from '../../platform/ids.js'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { CustomerIntegrationSchema } from './customer-integration.entity.js'

const p = usePlatform()

const full = {
  external_id: 'acme-1',
  name: 'Acme',
  email: 'billing@acme.test',
  address_line1: '1 Main St',
  address_line2: 'Suite 2',
  address_city: 'Springfield',
  address_state: 'IL',
  address_postal_code: '62701',
  address_country: 'US',
  metadata: { tier: 'gold', region: 'us' },
}

async function customerEvents(customerId: string): Promise<number> {
  const rows = await p.ctx.orm.em.fork().getConnection().execute(
    `SELECT count(*)::int AS n FROM system_events_outbox WHERE event_name = 'customer.created' AND entity_id = ?`, [customerId],
  )
  return rows[0].n
}

test('create, get, list with filters and pagination, update, delete', async () => {
  const { api, tenantId, environments, userId } = await p.newTenant()
  const c1 = await created(api.post('/v1/customers', full))
  assert.match(c1.id, /^cust_/)
  assert.deepEqual({ ...c1, id: undefined, created_at: undefined, updated_at: undefined }, {
    ...full, id: undefined, created_at: undefined, updated_at: undefined, tenant_id: tenantId, environment_id: environments.production,
    status: 'published', created_by: userId, updated_by: userId, integrations: [], parent_customer_id: null, parent_customer: null,
  })
  assert.deepEqual((await api.get(`/v1/customers/${c1.id}`)).body, c1)

  const c2 = await created(api.post('/v1/customers', { external_id: 'acme-2' }))
  assert.equal(c2.name, null)
  assert.deepEqual(c2.metadata, {})
  const c3 = await created(api.post('/v1/customers', { external_id: 'acme-3' }))

  const list = (await api.get('/v1/customers')).body
  assert.deepEqual(list.items.map((c: any) => c.id), [c1.id, c2.id, c3.id])
  assert.deepEqual(list.pagination, { limit: 50, offset: 0, total: 3 })
  const page2 = (await api.get('/v1/customers?limit=2&offset=2')).body
  assert.deepEqual(page2.items.map((c: any) => c.id), [c3.id])
  assert.deepEqual(page2.pagination, { limit: 2, offset: 2, total: 3 })
  assertError(await api.get('/v1/customers?limit=1001'), 400, 'validation_error', /limit/)
  assert.deepEqual((await api.get('/v1/customers?external_id=acme-2')).body.items.map((c: any) => c.id), [c2.id])

  const updated = await api.put(`/v1/customers/${c2.id}`, { name: 'Acme Two', address_city: 'Chicago', metadata: { tier: 'silver' } })
  assert.equal(updated.status, 200)
  assert.equal(updated.body.name, 'Acme Two')
  assert.equal(updated.body.address_city, 'Chicago')
  assert.deepEqual(updated.body.metadata, { tier: 'silver' }, 'metadata is replaced, not merged')
  assert.equal(updated.body.external_id, 'acme-2')
  assert.deepEqual((await api.get(`/v1/customers/${c2.id}`)).body, updated.body)
  // external_id can change to a free value
  assert.equal((await api.put(`/v1/customers/${c2.id}`, { external_id: 'acme-2b' })).body.external_id, 'acme-2b')

  const del = await api.delete(`/v1/customers/${c3.id}`)
  assert.equal(del.status, 204)
  assert.equal(del.body, null)
  assertError(await api.get(`/v1/customers/${c3.id}`), 404, 'not_found')
  assertError(await api.put(`/v1/customers/${c3.id}`, { name: 'x' }), 404, 'not_found')
  assertError(await api.delete(`/v1/customers/${c3.id}`), 404, 'not_found')
  assert.equal((await api.get('/v1/customers')).body.pagination.total, 2)
  const deleted = (await api.post('/v1/customers/search', { status: 'deleted' })).body
  assert.deepEqual(deleted.items.map((c: any) => [c.id, c.status]), [[c3.id, 'deleted']])
  // Deleting frees the external_id.
  const again = await created(api.post('/v1/customers', { external_id: 'acme-3' }))
  assert.notEqual(again.id, c3.id)
  assertError(await api.get('/v1/customers/cust_unknown'), 404, 'not_found')
})

test('external_id is unique per environment, on create and on update', async () => {
  const { api, apiKey, environments, tenantId } = await p.newTenant()
  const a = await created(api.post('/v1/customers', { external_id: 'dup' }))
  const b = await created(api.post('/v1/customers', { external_id: 'other' }))
  const before = await countRows(p, 'customers', tenantId)
  assertError(await api.post('/v1/customers', { external_id: 'dup', name: 'second' }), 409, 'already_exists', /external_id dup/)
  assertError(await api.put(`/v1/customers/${b.id}`, { external_id: 'dup' }), 409, 'already_exists', /external_id dup/)
  assert.equal((await api.get(`/v1/customers/${b.id}`)).body.external_id, 'other')
  assert.equal(await countRows(p, 'customers', tenantId), before)
  // Re-sending its own external_id is not a clash.
  assert.equal((await api.put(`/v1/customers/${a.id}`, { external_id: 'dup', name: 'same' })).status, 200)
  // Another environment and another tenant have their own namespaces.
  await created(p.client(apiKey, environments.development).post('/v1/customers', { external_id: 'dup' }))
  await created((await p.newTenant()).api.post('/v1/customers', { external_id: 'dup' }))
})

test("Flexprice's forms: read by external id, update by id or external id in the query", async () => {
  const { api, apiKey, environments } = await p.newTenant()
  const a = await created(api.post('/v1/customers', { external_id: 'acme', name: 'Acme' }))
  assert.deepEqual((await api.get('/v1/customers/external/acme')).body, a)
  assertError(await api.get('/v1/customers/external/nobody'), 404, 'not_found', /customer with external_id nobody not found/)
  assertError(await p.client(apiKey, environments.development).get('/v1/customers/external/acme'), 404, 'not_found')

  const byId = await api.put(`/v1/customers?id=${a.id}`, { name: 'Acme Inc' })
  assert.equal(byId.status, 200, JSON.stringify(byId.body))
  assert.equal(byId.body.name, 'Acme Inc')
  const byExternal = await api.put('/v1/customers?external_customer_id=acme', { email: 'billing@acme.test' })
  assert.deepEqual([byExternal.body.id, byExternal.body.name, byExternal.body.email], [a.id, 'Acme Inc', 'billing@acme.test'])
  assertError(await api.put('/v1/customers', { name: 'x' }), 400, 'validation_error', /exactly one of id and external_customer_id/)
  assertError(await api.put(`/v1/customers?id=${a.id}&external_customer_id=acme`, { name: 'x' }), 400, 'validation_error', /exactly one/)
  assertError(await api.put('/v1/customers?external_customer_id=nobody', { name: 'x' }), 404, 'not_found')
  assertError(await api.put('/v1/customers?customer=acme', { name: 'x' }), 400, 'validation_error', /customer/)
})

test('create and update reject invalid input naming the field, and write nothing', async () => {
  const { api, tenantId } = await p.newTenant()
  const existing = await created(api.post('/v1/customers', full))
  const customers = await countRows(p, 'customers', tenantId)
  const events = await countRows(p, 'system_events_outbox', tenantId)
  const tooLong: [string, number][] = [
    ['address_line1', 256], ['address_line2', 256], ['address_city', 101], ['address_state', 101], ['address_postal_code', 21],
  ]
  for (const [field, length] of tooLong) {
    const value = 'x'.repeat(length)
    assertError(await api.post('/v1/customers', { external_id: 'new', [field]: value }), 400, 'validation_error', new RegExp(`${field} must NOT have more than ${length - 1} characters`))
    assertError(await api.put(`/v1/customers/${existing.id}`, { [field]: value }), 400, 'validation_error', new RegExp(field))
    // the limit itself is accepted
    assert.equal((await api.put(`/v1/customers/${existing.id}`, { [field]: 'y'.repeat(length - 1) })).status, 200)
  }
  const invalid: [object, RegExp][] = [
    [{}, /external_id/],
    [{ external_id: '' }, /external_id/],
    [{ external_id: '   ' }, /external_id must not be blank/],
    [{ external_id: 'x', email: 'not-an-email' }, /email/],
    [{ external_id: 'x', metadata: { n: 1 } }, /metadata\.n must be string/],
    [{ external_id: 'x', surprise: true }, /surprise/],
    [{ external_id: 42 }, /external_id must be string/],
  ]
  for (const [body, message] of invalid) assertError(await api.post('/v1/customers', body), 400, 'validation_error', message)
  assertError(await api.put(`/v1/customers/${existing.id}`, { external_id: ' ' }), 400, 'validation_error', /external_id must not be blank/)
  assertError(await api.put(`/v1/customers/${existing.id}`, { email: 'nope' }), 400, 'validation_error', /email/)
  assertError(await api.put(`/v1/customers/${existing.id}`, { id: 'cust_other' }), 400, 'validation_error', /^id must NOT have additional properties/)
  assert.equal(await countRows(p, 'customers', tenantId), customers)
  assert.equal(await countRows(p, 'system_events_outbox', tenantId), events, 'no event for a rejected customer')
  const after = (await api.get(`/v1/customers/${existing.id}`)).body
  assert.equal(after.external_id, full.external_id)
  assert.equal(after.email, full.email)
})

test('customer.created is written to the outbox exactly once per created customer', async () => {
  const { api, tenantId } = await p.newTenant()
  const a = await created(api.post('/v1/customers', full))
  const b = await created(api.post('/v1/customers', { external_id: 'b' }))
  assertError(await api.post('/v1/customers', { external_id: 'b' }), 409, 'already_exists')
  await api.put(`/v1/customers/${a.id}`, { name: 'renamed' })
  await api.delete(`/v1/customers/${b.id}`)
  assert.equal(await customerEvents(a.id), 1)
  assert.equal(await customerEvents(b.id), 1)
  // Racing creates: the unique index picks one, and only the winner has an event.
  const race = await Promise.all([1, 2, 3].map(() => api.post('/v1/customers', { external_id: 'race' })))
  assert.deepEqual(race.map((r) => r.status).sort(), [201, 409, 409])
  const winner = race.find((r) => r.status === 201)!.body
  assert.equal(await customerEvents(winner.id), 1)
  assert.equal(await countRows(p, 'system_events_outbox', tenantId), 3)
  const rows = await p.ctx.orm.em.fork().getConnection().execute(
    `SELECT event_name, entity_type, entity_id, payload FROM system_events_outbox WHERE tenant_id = ? ORDER BY created_at, id`, [tenantId],
  )
  assert.deepEqual(rows.map((r: any) => [r.event_name, r.entity_type, r.entity_id]), [
    ['customer.created', 'customer', a.id], ['customer.created', 'customer', b.id], ['customer.created', 'customer', winner.id],
  ])
  assert.equal(rows[0].payload.external_id, 'acme-1')
  assert.deepEqual(rows[0].payload.metadata, full.metadata)
})

test('search: metadata filters must all match, exact fields, default status, pagination', async () => {
  const { api } = await p.newTenant()
  const gold = await created(api.post('/v1/customers', { external_id: 's1', email: 'a@x.test', metadata: { tier: 'gold', region: 'eu' } }))
  const goldUs = await created(api.post('/v1/customers', { external_id: 's2', email: 'b@x.test', metadata: { tier: 'gold', region: 'us' } }))
  const silver = await created(api.post('/v1/customers', { external_id: 's3', email: 'a@x.test', metadata: { tier: 'silver', region: 'eu' } }))
  const plain = await created(api.post('/v1/customers', { external_id: 's4' }))
  const gone = await created(api.post('/v1/customers', { external_id: 's5', metadata: { tier: 'gold', region: 'eu' } }))
  await api.delete(`/v1/customers/${gone.id}`)
  const ids = async (body: object) => {
    const r = await api.post('/v1/customers/search', body)
    assert.equal(r.status, 200, JSON.stringify(r.body))
    return r.body.items.map((c: any) => c.id)
  }
  assert.deepEqual(await ids({}), [gold.id, goldUs.id, silver.id, plain.id])
  assert.deepEqual(await ids({ filters: { metadata: { tier: 'gold' } } }), [gold.id, goldUs.id])
  assert.deepEqual(await ids({ filters: { metadata: { tier: 'gold', region: 'eu' } } }), [gold.id])
  assert.deepEqual(await ids({ filters: { metadata: { tier: 'gold', region: 'apac' } } }), [])
  assert.deepEqual(await ids({ filters: { metadata: { region: 'eu' } }, email: 'a@x.test' }), [gold.id, silver.id])
  assert.deepEqual(await ids({ filters: { metadata: {} } }), [gold.id, goldUs.id, silver.id, plain.id])
  assert.deepEqual(await ids({ external_id: 's3' }), [silver.id])
  assert.deepEqual(await ids({ status: 'deleted', filters: { metadata: { tier: 'gold' } } }), [gone.id])
  const page = (await api.post('/v1/customers/search', { filters: { metadata: { region: 'eu' } }, limit: 1, offset: 1 })).body
  assert.deepEqual(page.items.map((c: any) => c.id), [silver.id])
  assert.deepEqual(page.pagination, { limit: 1, offset: 1, total: 2 })
  assert.deepEqual((await api.post('/v1/customers/search', {})).body.pagination, { limit: 50, offset: 0, total: 4 })

  assertError(await api.post('/v1/customers/search', { limit: 0 }), 400, 'validation_error', /limit/)
  assertError(await api.post('/v1/customers/search', { limit: 1001 }), 400, 'validation_error', /limit/)
  assertError(await api.post('/v1/customers/search', { offset: -1 }), 400, 'validation_error', /offset/)
  assertError(await api.post('/v1/customers/search', { status: 'gone' }), 400, 'validation_error', /status/)
  assertError(await api.post('/v1/customers/search', { filters: { metadata: { tier: 1 } } }), 400, 'validation_error', /filters\.metadata\.tier/)
  assertError(await api.post('/v1/customers/search', { filters: { name: 'x' } }), 400, 'validation_error', /filters\.name/)
})

test('integrations are read into the customer, from its own environment only', async () => {
  const { api, tenantId, environments } = await p.newTenant()
  const other = await p.newTenant()
  const customer = await created(api.post('/v1/customers', { external_id: 'int' }))
  const bare = await created(api.post('/v1/customers', { external_id: 'bare' }))
  const em = p.ctx.orm.em.fork()
  const link = (tenant_id: string, environment_id: string, provider_type: string, status = 'published') =>
    em.create(CustomerIntegrationSchema, {
      id: newId('cint'), tenant_id, environment_id, entity_id: customer.id, provider_type, provider_entity_id: `${provider_type}_123`,
      status, metadata: { synced: 'yes' },
    })
  const stripe = link(tenantId, environments.production, 'stripe')
  link(tenantId, environments.production, 'razorpay', 'deleted')
  link(tenantId, environments.development, 'chargebee')
  link(other.tenantId, other.environments.production, 'hubspot')
  await em.flush()

  const expected = [{
    id: stripe.id, tenant_id: tenantId, environment_id: environments.production, status: 'published', metadata: { synced: 'yes' },
    created_at: stripe.created_at.toISOString(), updated_at: stripe.updated_at.toISOString(), created_by: null, updated_by: null,
    entity_id: customer.id, provider_type: 'stripe', provider_entity_id: 'stripe_123',
  }]
  assert.deepEqual((await api.get(`/v1/customers/${customer.id}`)).body.integrations, expected)
  const listed = (await api.get('/v1/customers')).body.items
  assert.deepEqual(listed.map((c: any) => [c.id, c.integrations.length]), [[customer.id, 1], [bare.id, 0]])
  assert.deepEqual((await api.post('/v1/customers/search', { external_id: 'int' })).body.items[0].integrations, expected)
  assert.deepEqual((await api.put(`/v1/customers/${customer.id}`, { name: 'n' })).body.integrations, expected)
})

test("tenants and environments never see each other's customers", async () => {
  const a = await p.newTenant()
  const b = await p.newTenant()
  const customer = await created(a.api.post('/v1/customers', { ...full, external_id: 'iso' }))
  for (const client of [b.api, p.client(a.apiKey, a.environments.development)]) {
    assertError(await client.get(`/v1/customers/${customer.id}`), 404, 'not_found')
    assertError(await client.put(`/v1/customers/${customer.id}`, { name: 'hijacked' }), 404, 'not_found')
    assertError(await client.delete(`/v1/customers/${customer.id}`), 404, 'not_found')
    assert.deepEqual((await client.get('/v1/customers')).body.items, [])
    assert.deepEqual((await client.post('/v1/customers/search', { filters: { metadata: { tier: 'gold' } } })).body.items, [])
    assert.deepEqual((await client.post('/v1/customers/search', { external_id: 'iso' })).body.items, [])
  }
  const mine = (await a.api.get(`/v1/customers/${customer.id}`)).body
  assert.equal(mine.name, 'Acme')
  assert.equal(mine.status, 'published')
})
