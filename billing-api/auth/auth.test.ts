// Service accounts, API keys and the tenant read (spec: Authentication, Errors 1 and 10).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { usePlatform } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'

const p = usePlatform({ services: ['billing-api'], config: { apiKeyCacheTtlMs: 0 } })

test('GET /v1/tenants/{id} returns the caller\'s tenant and 404 for any other id', async () => {
  const a = await p.newTenant('Alpha GmbH')
  const b = await p.newTenant('Beta Ltd')
  const res = await a.api.get(`/v1/tenants/${a.tenantId}`)
  assert.equal(res.status, 200)
  assert.equal(res.body.id, a.tenantId)
  assert.equal(res.body.name, 'Alpha GmbH')
  assert.equal(res.body.status, 'published')
  for (const id of [b.tenantId, 'tenant_unknown']) {
    const r = await a.api.get(`/v1/tenants/${id}`)
    assert.deepEqual(r.body, { code: 'not_found', http_status_code: 404, message: `tenant ${id} not found` })
  }
})

test('PUT /v1/tenants/update changes the caller\'s own tenant: name, metadata and billing details (every key written, null when unset)', async () => {
  const a = await p.newTenant('Alpha GmbH')
  const b = await p.newTenant('Beta Ltd')
  assert.deepEqual((await a.api.get(`/v1/tenants/${a.tenantId}`)).body.billing_details, { address: null, email: null, help_email: null, phone: null })

  const billing = { email: 'billing@alpha.example', address: { address_line1: '1 Main St', address_country: 'DE' } }
  const res = await a.api.put('/v1/tenants/update', { name: 'Alpha AG', metadata: { region: 'eu' }, billing_details: billing })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const expected = {
    address: { address_line1: '1 Main St', address_line2: null, address_city: null, address_state: null, address_postal_code: null, address_country: 'DE' },
    email: 'billing@alpha.example', help_email: null, phone: null,
  }
  assert.deepEqual([res.body.id, res.body.name, res.body.metadata, res.body.billing_details], [a.tenantId, 'Alpha AG', { region: 'eu' }, expected])
  assert.deepEqual((await a.api.get(`/v1/tenants/${a.tenantId}`)).body, res.body, 'read back as written')

  // Another tenant is untouched; a field left out keeps its value; bad input changes nothing.
  const other = (await b.api.get(`/v1/tenants/${b.tenantId}`)).body
  assert.deepEqual([other.name, other.billing_details.email], ['Beta Ltd', null])
  assert.equal((await a.api.put('/v1/tenants/update', { metadata: {} })).body.name, 'Alpha AG')
  const bad = await a.api.put('/v1/tenants/update', { name: 'x', billing_details: { address: { address_postal_code: '1'.repeat(21) } } })
  assert.deepEqual([bad.status, bad.body.code], [400, 'validation_error'])
  assert.equal((await a.api.get(`/v1/tenants/${a.tenantId}`)).body.name, 'Alpha AG')

  // A member service account cannot change the tenant.
  const member = await created(a.api.post('/v1/users', { name: 'bot' }))
  const key = await created(a.api.post('/v1/secrets/api/keys', { name: 'bot', user_id: member.id }))
  const denied = await p.client(key.api_key).put('/v1/tenants/update', { name: 'hijacked' })
  assert.deepEqual([denied.status, denied.body.code], [403, 'permission_denied'])
})

test('service accounts and API keys: create, list with filters, revoke, and archive only without active keys', async () => {
  const t = await p.newTenant()
  const user = await created(t.api.post('/v1/users', { name: 'ci-bot', metadata: { team: 'platform' } }))
  assert.equal(user.type, 'service_account')
  assert.deepEqual(user.roles, ['member'])

  const updated = await t.api.put(`/v1/users/${user.id}`, { name: 'ci-robot', metadata: { team: 'billing' } })
  assert.equal(updated.status, 200)
  assert.equal(updated.body.name, 'ci-robot')
  assert.deepEqual(updated.body.metadata, { team: 'billing' })

  const key = await created(t.api.post('/v1/secrets/api/keys', { name: 'ci', user_id: user.id, expires_at: '2099-01-01T00:00:00Z' }))
  assert.match(key.api_key, /^ml_/)
  const expiring = await created(t.api.post('/v1/secrets/api/keys', { name: 'short', user_id: user.id, expires_at: '2030-01-01T00:00:00Z' }))

  // The new key works, as the member service account, in the same tenant.
  const botApi = p.client(key.api_key)
  assert.equal((await botApi.get(`/v1/tenants/${t.tenantId}`)).status, 200)
  // Members cannot administer accounts.
  const denied = await botApi.post('/v1/users', { name: 'x' })
  assert.deepEqual(denied.body, { code: 'permission_denied', http_status_code: 403, message: 'this operation requires the super_admin role' })

  const listed = (await t.api.get(`/v1/secrets/api/keys?user_id=${user.id}`)).body.items
  assert.deepEqual(listed.map((k: any) => k.id).sort(), [key.id, expiring.id].sort())
  assert.ok(listed.every((k: any) => k.api_key === undefined && k.user_id === user.id), 'the secret is never listed')
  const notExpired = (await t.api.get(`/v1/secrets/api/keys?user_id=${user.id}&not_expired_at=2031-01-01T00:00:00Z`)).body.items
  assert.deepEqual(notExpired.map((k: any) => k.id), [key.id])

  // Archiving is refused while keys are active, and nothing changes.
  const refused = await t.api.delete(`/v1/users/${user.id}`)
  assert.equal(refused.status, 400)
  assert.equal(refused.body.code, 'invalid_operation')
  assert.match(refused.body.message, /2 active API key/)
  assert.equal((await t.api.get(`/v1/users/${user.id}`)).body.status, 'published')

  for (const k of [key, expiring]) assert.equal((await t.api.delete(`/v1/secrets/api/keys/${k.id}`)).status, 204)
  assert.equal((await botApi.get(`/v1/tenants/${t.tenantId}`)).status, 401, 'a revoked key stops working')
  assert.equal((await t.api.delete(`/v1/users/${user.id}`)).status, 204)
  assert.equal((await t.api.get(`/v1/users/${user.id}`)).body.status, 'archived')
})

test("Flexprice's forms: the user of the key, user search, service_account_id and type on keys, the key under secret, environment rename", async () => {
  const t = await p.newTenant()
  const me = (await t.api.get('/v1/users/me')).body
  assert.deepEqual([me.id, me.tenant_id, me.tenant], [t.userId, t.tenantId, null])
  const bot = await created(t.api.post('/v1/users', { name: 'bot', type: 'service_account', roles: ['member'] }))
  assert.equal((await t.api.post('/v1/users', { name: 'person', type: 'user' })).status, 400)
  const search = async (body: object) => (await t.api.post('/v1/users/search', body)).body
  const accounts = await search({ type: 'service_account' })
  assert.ok(accounts.items.some((u: any) => u.id === bot.id))
  assert.ok(accounts.items.every((u: any) => u.type === 'service_account'))
  assert.equal(accounts.pagination.total, accounts.items.length)
  assert.deepEqual((await search({ type: 'service_account', limit: 1, offset: 0 })).items.length, 1)

  const key = await created(t.api.post('/v1/secrets/api/keys', { name: 'ci', type: 'private_key', service_account_id: bot.id }))
  assert.deepEqual([key.user_id, key.type, key.secret.id, key.secret.name, key.secret.api_key], [bot.id, 'private_key', key.id, 'ci', undefined])
  assert.equal((await t.api.post('/v1/secrets/api/keys', { name: 'pk', type: 'publishable_key' })).status, 400)
  const clash = await t.api.post('/v1/secrets/api/keys', { name: 'x', user_id: t.userId, service_account_id: bot.id })
  assert.deepEqual([clash.status, clash.body.message], [400, 'service_account_id: names another user than user_id'])
  const listed = (await t.api.get(`/v1/secrets/api/keys?user_id=${bot.id}`)).body.items
  assert.deepEqual(listed, [key.secret])

  const env = await created(t.api.post('/v1/environments', { name: 'staging', type: 'development' }))
  const renamed = await t.api.put(`/v1/environments/${env.id}`, { name: 'staging-2' })
  assert.deepEqual([renamed.status, renamed.body.name, renamed.body.type], [200, 'staging-2', 'development'])
  assert.equal((await t.api.put(`/v1/environments/${env.id}`, { type: 'production' })).status, 400)
  assert.equal((await (await p.newTenant()).api.put(`/v1/environments/${env.id}`, { name: 'x' })).status, 404)
})

test('users and keys of another tenant are invisible', async () => {
  const a = await p.newTenant()
  const b = await p.newTenant()
  const user = await created(a.api.post('/v1/users', { name: 'a-bot' }))
  assert.equal((await b.api.get(`/v1/users/${user.id}`)).status, 404)
  assert.equal((await b.api.put(`/v1/users/${user.id}`, { name: 'x' })).status, 404)
  assert.equal((await b.api.delete(`/v1/users/${user.id}`)).status, 404)
  assert.equal((await b.api.post('/v1/secrets/api/keys', { name: 'steal', user_id: user.id })).status, 404)
  assert.ok(!(await b.api.get('/v1/users')).body.items.some((u: any) => u.id === user.id))
  assert.equal((await b.api.get(`/v1/secrets/api/keys?user_id=${user.id}`)).body.items.length, 0)
})

test('an expired key is refused', async () => {
  const t = await p.newTenant()
  const past = await t.api.post('/v1/secrets/api/keys', { name: 'old', expires_at: '2001-01-01T00:00:00Z' })
  assert.equal(past.status, 400)
  assert.equal(past.body.code, 'validation_error')
})
