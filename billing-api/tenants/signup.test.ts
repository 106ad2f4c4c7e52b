// POST /v1/signup: a tenant, its environments, the signing-up user with metadata and a first
// API key; off unless SIGNUP_ENABLED.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { assertError } from '../../test/support/assertions.js'
import { usePlatform } from '../../test/support/platform.js'

const p = usePlatform({ services: ['billing-api'], config: { signupEnabled: true } })

test('signup creates a tenant whose key works and sees only its own tenant; the user keeps its metadata', async () => {
  const res = await p.client().post('/v1/signup', { tenant_name: 'Acme', name: 'Ada', email: 'ada@acme.test', metadata: { plan: 'trial', source: 'website' } })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.deepEqual(Object.keys(res.body).sort(), ['api_key', 'environments', 'tenant_id', 'user_id'])
  const api = p.client(res.body.api_key)
  const tenant = await api.get(`/v1/tenants/${res.body.tenant_id}`)
  assert.deepEqual([tenant.status, tenant.body.name], [200, 'Acme'])
  const users = (await api.get('/v1/users')).body.items
  assert.deepEqual(users.map((u: any) => [u.id, u.name, u.email, u.type, u.roles, u.metadata]), [
    [res.body.user_id, 'Ada', 'ada@acme.test', 'user', ['super_admin'], { plan: 'trial', source: 'website' }],
  ])
  const envs = (await api.get('/v1/environments')).body.items.map((e: any) => e.id).sort()
  assert.deepEqual(envs, [res.body.environments.development, res.body.environments.production].sort())

  // tenancy: another tenant's key does not see this tenant, and this key does not see the other's
  const other = await p.newTenant()
  assertError(await other.api.get(`/v1/tenants/${res.body.tenant_id}`), 404, 'not_found')
  assertError(await api.get(`/v1/tenants/${other.tenantId}`), 404, 'not_found')
  assert.equal((await other.api.get(`/v1/users/${res.body.user_id}`)).status, 404)
})

test('bad input is a 400; with SIGNUP_ENABLED off the route answers 404 and creates nothing', async () => {
  assertError(await p.client().post('/v1/signup', { tenant_name: 'Acme', email: 'not-an-email' }), 400, 'validation_error')
  assertError(await p.client().post('/v1/signup', { tenant_name: 'Acme', email: 'a@b.test', metadata: { n: 1 } }), 400, 'validation_error')
  assertError(await p.client().post('/v1/signup', { email: 'a@b.test' }), 400, 'validation_error')
  const count = async () => Number((await p.ctx.orm.em.fork().getConnection().execute(`SELECT count(*)::int AS n FROM tenants WHERE name = 'Closed'`))[0].n)
  p.ctx.config.signupEnabled = false
  try {
    assertError(await p.client().post('/v1/signup', { tenant_name: 'Closed', email: 'a@b.test' }), 404, 'not_found')
  } finally {
    p.ctx.config.signupEnabled = true
  }
  assert.equal(await count(), 0)
})
