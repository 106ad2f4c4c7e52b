// The OpenAPI document is generated from the route schemas and lists every /v1 route.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { testConfig, usePlatform } from '../test/support/platform.js'

// Ingest without the aggregator in its process keeps spooled batches until Kafka acknowledged them.
const p = usePlatform({ services: ['billing-api', 'ingest'], config: { spool: { ...testConfig().spool, retainUntil: 'acked' } } })

test('GET /v1/docs/openapi.json documents the routes with their schemas', async () => {
  const res = await p.client().get('/v1/docs/openapi.json')
  assert.equal(res.status, 200)
  const doc = res.body
  assert.match(doc.openapi, /^3\./)
  assert.deepEqual(doc.components.securitySchemes.apiKey, { type: 'apiKey', in: 'header', name: 'x-api-key' })
  const expected: [string, string][] = [
    ['post', '/v1/events'], ['post', '/v1/events/raw/bulk'], ['get', '/v1/tenants/{id}'], ['put', '/v1/users/{id}'],
    ['delete', '/v1/users/{id}'], ['get', '/v1/secrets/api/keys'], ['post', '/v1/meters'], ['put', '/v1/meters/{id}'], ['post', '/v1/meters/{id}/usage'],
    ['post', '/v1/customers'], ['post', '/v1/customers/search'], ['post', '/v1/plans/search'], ['post', '/v1/prices'],
    ['post', '/v1/features'], ['post', '/v1/entitlements'], ['post', '/v1/addons'], ['post', '/v1/groups'],
    ['post', '/v1/coupons'], ['post', '/v1/taxes/rates'], ['post', '/v1/pricing-units'], ['post', '/v1/creditgrants'],
    ['post', '/v1/subscriptions'], ['post', '/v1/invoices/internal/preview'],
    ['post', '/v1/invoices/{id}/refunds'], ['post', '/v1/invoices/{id}/payment_failures'], ['post', '/v1/invoices/{id}/payment_link'],
    ['get', '/v1/invoices/{id}/payments'], ['get', '/v1/invoices/{id}/lines/{line_id}/explain'],
    ['post', '/v1/ai/pricing/parse'], ['post', '/v1/environments/clone'], ['get', '/v1/environments/clone-jobs/{job_id}'], ['post', '/v1/subscriptions/{id}/phases'], ['post', '/v1/signup'],
    ['post', '/v1/entitlements/check'], ['post', '/v1/analytics/meter-usage'], ['post', '/v1/analytics/usage/export'],
    ['post', '/v1/dashboard/revenue-dashboard'], ['post', '/v1/entitlements/check/batch'],
    ['get', '/v1/customers/{id}/live-balance'], ['get', '/v1/customers/{id}/usage-summary'],
  ]
  for (const [method, path] of expected) assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path} is documented`)
  const meterUpdate = doc.paths['/v1/meters/{id}'].put
  assert.deepEqual(meterUpdate.requestBody.content['application/json'].schema.properties.bucket_size.enum, ['HOUR', 'MINUTE'])
  assert.deepEqual(meterUpdate.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/Meter' })
  assert.ok(doc.components.schemas.Meter.properties.rounding)
  assert.deepEqual(meterUpdate.responses['404'].content['application/json'].schema, { $ref: '#/components/schemas/ErrorResponse' })
  // signup is the one /v1 route without an API key
  assert.deepEqual(doc.paths['/v1/signup'].post.security, [])
  const customerBody = doc.paths['/v1/customers'].post.requestBody.content['application/json'].schema
  assert.equal(customerBody.properties.address_line1.maxLength, 255)
  assert.deepEqual(customerBody.required, ['external_id'])
  const refund = doc.paths['/v1/invoices/{id}/refunds'].post.requestBody.content['application/json'].schema
  assert.deepEqual(refund.required, ['amount'])
  const search = doc.paths['/v1/invoices/search'].post.requestBody.content['application/json'].schema
  assert.ok(search.properties.filters && search.properties.expand, 'search documents filters and expand')
  const explain = doc.paths['/v1/invoices/{id}/lines/{line_id}/explain'].get
  assert.deepEqual(explain.parameters.filter((x: { in: string }) => x.in === 'query').map((x: { name: string }) => x.name).sort(), ['events_cursor', 'events_limit', 'window_size'])
  const bulk = doc.paths['/v1/events/raw/bulk'].post.requestBody.content['application/json'].schema
  assert.equal(bulk.properties.events.maxItems, 1000)
  const check = doc.paths['/v1/entitlements/check'].post
  assert.deepEqual(Object.keys(check.requestBody.content['application/json'].schema.properties), ['external_customer_id', 'customer_id', 'feature_id', 'feature_lookup_key'])
  assert.equal(check.responses['200'].content['application/json'].schema.properties.remaining.description, 'usage_limit - usage, never below 0; null when unlimited')
  assert.ok(check.responses['200'].content['application/json'].schema.properties.usage_as_of)
  const analytics = doc.paths['/v1/analytics/meter-usage'].post.requestBody.content['application/json'].schema
  assert.equal(analytics.properties.breakdown_bucket.type, 'boolean')
})
