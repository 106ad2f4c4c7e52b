// Flexprice's paths for connections (/secrets/integrations/...) and entity mappings
// (/entity-integration-mappings): the same records as the spec's routes, credentials never
// answered, one connection per provider, and another tenant sees none of it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { assertError, countRows } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'

const p = usePlatform({ services: ['billing-api'] })
const stripe = { provider: 'stripe', name: 'Stripe', credentials: { api_key: 'sk_test_flex_0000001234', webhook_secret: 'whsec_flex_abcdefghijklmnop' } }

test('a connection created at Flexprice\'s path is the spec\'s connection; read by provider, listed as linked, deleted by id', async () => {
  const t = await p.newTenant()
  const res = await t.api.post('/v1/secrets/integrations/create/stripe', stripe)
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const secret = res.body
  assert.deepEqual([secret.provider, secret.name, secret.type, secret.status], ['stripe', 'Stripe', 'integration', 'published'])
  assert.ok(!JSON.stringify(secret).includes('sk_test_flex_0000001234') && !JSON.stringify(secret).includes('whsec_flex'), 'no credential is answered')
  assert.match(secret.display_id, /1234$/)
  const spec = (await t.api.get(`/v1/integrations/connections/${secret.id}`)).body
  assert.deepEqual([spec.provider, spec.name], ['stripe', 'Stripe'])

  assert.deepEqual((await t.api.get('/v1/secrets/integrations/by-provider/stripe')).body, secret)
  assert.deepEqual((await t.api.get('/v1/secrets/integrations/linked')).body, { providers: ['stripe'] })
  assertError(await t.api.post('/v1/secrets/integrations/create/stripe', stripe), 409, 'already_exists', /already has a stripe connection/)
  assertError(await t.api.post('/v1/secrets/integrations/create/stripe', { ...stripe, provider: 'generic_http' }), 400, 'validation_error', /provider must be the path's/)

  const del = await t.api.delete(`/v1/secrets/integrations/${secret.id}`)
  assert.equal(del.status, 204)
  assertError(await t.api.get('/v1/secrets/integrations/by-provider/stripe'), 404, 'not_found')
  assert.deepEqual((await t.api.get('/v1/secrets/integrations/linked')).body, { providers: [] })
})

test('a mapping created at Flexprice\'s path links the entity as POST /integrations/link does; deleted by id', async () => {
  const t = await p.newTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const res = await t.api.post('/v1/entity-integration-mappings', { entity_type: 'customer', entity_id: customer.id, provider_type: 'stripe', provider_entity_id: 'cus_1' })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  assert.deepEqual([res.body.entity_type, res.body.entity_id, res.body.provider_type, res.body.provider_entity_id], ['customer', customer.id, 'stripe', 'cus_1'])
  assert.deepEqual((await t.api.get(`/v1/entity-integration-mappings/${res.body.id}`)).body, res.body)
  assertError(await t.api.post('/v1/entity-integration-mappings', { entity_type: 'customer', entity_id: 'cust_unknown', provider_type: 'stripe', provider_entity_id: 'cus_2' }), 400, 'validation_error', /entity_id/)
  assert.equal((await t.api.delete(`/v1/entity-integration-mappings/${res.body.id}`)).status, 204)
  assertError(await t.api.get(`/v1/entity-integration-mappings/${res.body.id}`), 404, 'not_found')
  assertError(await t.api.delete(`/v1/entity-integration-mappings/${res.body.id}`), 404, 'not_found')
})

test('another tenant\'s key cannot read, list, delete or map onto a tenant\'s connections and entities', async () => {
  const t = await p.newTenant()
  const secret = await created(t.api.post('/v1/secrets/integrations/create/stripe', stripe))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const mapping = await created(t.api.post('/v1/entity-integration-mappings', { entity_type: 'customer', entity_id: customer.id, provider_type: 'stripe', provider_entity_id: 'cus_1' }))
  const other = await p.newTenant()
  assertError(await other.api.get('/v1/secrets/integrations/by-provider/stripe'), 404, 'not_found')
  assert.deepEqual((await other.api.get('/v1/secrets/integrations/linked')).body, { providers: [] })
  assertError(await other.api.delete(`/v1/secrets/integrations/${secret.id}`), 404, 'not_found')
  assertError(await other.api.get(`/v1/entity-integration-mappings/${mapping.id}`), 404, 'not_found')
  assertError(await other.api.delete(`/v1/entity-integration-mappings/${mapping.id}`), 404, 'not_found')
  assertError(await other.api.post('/v1/entity-integration-mappings', { entity_type: 'customer', entity_id: customer.id, provider_type: 'stripe', provider_entity_id: 'cus_9' }), 400, 'validation_error', /entity_id/)
  assert.equal(await countRows(p, 'entity_integration_mappings', t.tenantId), 1)
  assert.equal((await t.api.get('/v1/secrets/integrations/by-provider/stripe')).body.id, secret.id)
})
