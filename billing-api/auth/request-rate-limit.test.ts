// Inbound request limits per API key and per tenant (Redis, shared by every process): 429
// too_many_requests with Retry-After, on the billing API and on ingest; other keys and
// tenants unaffected; a tenant's own limits override the defaults.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createQueueRedis } from '../../platform/redis.js'
import { rateLimitUnchecked } from '../../platform/metrics.js'
import { effectiveLimits, RequestRateLimiter } from './request-rate-limit.js'
import { sqlOn, testConfig, usePlatform, type ApiClient } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError } from '../../test/support/assertions.js'

// 5 requests per key and 8 per tenant in a 60 s window, started by each counter's first request.
const p = usePlatform({
  services: ['billing-api', 'ingest'],
  config: { apiKeyCacheTtlMs: 0, requestRateLimit: { windowSeconds: 60, perKey: 5, perTenant: 8 }, spool: { ...testConfig().spool, retainUntil: 'acked' } },
})

async function statuses(api: ApiClient, path: string, n: number): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < n; i++) out.push((await api.get(path)).status)
  return out
}

test('effective limits: the tenant\'s own value wins, null falls back to the default, 0 means none', () => {
  const defaults = { windowSeconds: 60, perKey: 100, perTenant: 500 }
  assert.deepEqual(effectiveLimits(defaults, undefined), { perKey: 100, perTenant: 500 })
  assert.deepEqual(effectiveLimits(defaults, { perKey: 7, perTenant: null }), { perKey: 7, perTenant: 500 })
  assert.deepEqual(effectiveLimits(defaults, { perKey: 0, perTenant: 0 }), { perKey: 0, perTenant: 0 })
})

test('over the per-key limit: 429 with Retry-After and an ErrorResponse; another key of the tenant and another tenant are unaffected', async () => {
  const a = await p.newTenant()
  const b = await p.newTenant()
  const second = await created(a.api.post('/v1/secrets/api/keys', { name: 'second' })) // a: key 1, tenant 1
  const path = `/v1/tenants/${a.tenantId}`
  assert.deepEqual(await statuses(a.api, path, 4), [200, 200, 200, 200]) // key 5, tenant 5
  const res = await fetch(`${p.url}${path}`, { headers: { 'x-api-key': a.apiKey } })
  assert.equal(res.status, 429)
  const retryAfter = Number(res.headers.get('retry-after'))
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${res.headers.get('retry-after')}`)
  assertError({ status: res.status, body: await res.json() }, 429, 'too_many_requests', /5 requests per 60 s for this API key; retry after \d+ s/)
  // ingest answers the same for that key
  assertError(await a.api.post('/v1/events', { event_name: 'x', external_customer_id: 'c' }), 429, 'too_many_requests')

  // the tenant's other key still has its own allowance, until the tenant's 8 are used up
  const other = p.client(second.api_key)
  assert.deepEqual(await statuses(other, path, 3), [200, 200, 200]) // tenant 8
  assertError(await other.get(path), 429, 'too_many_requests', /8 requests per 60 s for this tenant/)

  // another tenant is unaffected
  assert.deepEqual(await statuses(b.api, `/v1/tenants/${b.tenantId}`, 4), [200, 200, 200, 200])
  assert.equal((await b.api.post('/v1/events', { event_name: 'x', external_customer_id: 'c' })).status, 202, 'its fifth request')
  assert.equal((await b.api.get(`/v1/tenants/${b.tenantId}`)).status, 429, 'and its sixth is over')
})

test('a tenant\'s own limits override the defaults (0 = unlimited) and apply to its keys only', async () => {
  const tight = await p.newTenant()
  const free = await p.newTenant()
  await sqlOn(p)(`UPDATE tenants SET rate_limit_per_key = 2 WHERE id = ?`, [tight.tenantId])
  await sqlOn(p)(`UPDATE tenants SET rate_limit_per_key = 0, rate_limit_per_tenant = 0 WHERE id = ?`, [free.tenantId])
  const tightPath = `/v1/tenants/${tight.tenantId}`
  assert.deepEqual(await statuses(tight.api, tightPath, 3), [200, 200, 429])
  assertError(await tight.api.get(tightPath), 429, 'too_many_requests', /2 requests per 60 s for this API key/)
  assert.deepEqual(new Set(await statuses(free.api, `/v1/tenants/${free.tenantId}`, 12)), new Set([200]), 'no limit: 12 requests pass')
})

test('Redis unreachable: the request passes unchecked (ingest keeps accepting) and is counted', async () => {
  const down = createQueueRedis('redis://127.0.0.1:1', 200) // nothing listens on port 1
  try {
    const limiter = new RequestRateLimiter(down, 'unused', { windowSeconds: 60, perKey: 1, perTenant: 1 })
    const before = (await rateLimitUnchecked.get()).values[0]?.value ?? 0
    for (let i = 0; i < 3; i++) await limiter.admit({ apiKeyId: 'key_x', tenantId: 'tenant_x' })
    assert.equal((await rateLimitUnchecked.get()).values[0]?.value, before + 3)
  } finally {
    down.disconnect()
  }
})
