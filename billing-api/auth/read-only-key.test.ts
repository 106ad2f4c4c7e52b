// Read-only API keys (issue #24): every write route of the app (enumerated from the running
// server, so a new route is covered without editing this file) answers 403 permission_denied to
// a read-only key and changes nothing (no Postgres row of the tenant, no event accepted); reads,
// including the POST routes marked as reads, work.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { routesOf } from '../../platform/http.js'
import { isWriteRoute } from '../http/route-access.js'
import { usePlatform, sqlOn, type TestPlatform } from '../../test/support/platform.js'
import { assertError } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'

const p = usePlatform({ services: ['billing-api', 'ingest'], config: { apiKeyCacheTtlMs: 0 } })

/** Routes a tenant API key reaches: not the operators' API, signup, provider webhooks or the docs. */
function apiKeyRoutes(platform: TestPlatform) {
  return routesOf(platform.app).filter((r) => /^\/v[12]\//.test(r.url) && !/^\/v1\/(admin|signup|docs)\b/.test(r.url))
}

const concrete = (url: string) => url.replace(/:([a-z_]+)/g, 'ro_$1').replace(/\*$/, 'x')

/** One fingerprint of every row of the tenant in every Postgres table that has a tenant_id. */
async function tenantFingerprint(tenantId: string): Promise<Record<string, string>> {
  const sql = sqlOn(p)
  const tables = await sql(`SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY 1`)
  const out: Record<string, string> = {}
  for (const { table_name: t } of tables) {
    const [row] = await sql(`SELECT md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS h FROM "${t}" x WHERE tenant_id = ?`, [tenantId])
    out[t] = row.h
  }
  const [tenant] = await sql(`SELECT md5(x::text) AS h FROM tenants x WHERE id = ?`, [tenantId])
  out.tenants = tenant.h
  return out
}

test('a read-only key: created through the key route, listed with its scope, refused on every write route (ingest too), nothing changed', async () => {
  const t = await p.newTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme', name: 'Acme' }))
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))

  const ro = await created(t.api.post('/v1/secrets/api/keys', { name: 'dashboard', scope: 'read_only' }))
  assert.equal(ro.scope, 'read_only')
  assert.match(ro.api_key, /^ml_/)
  const full = await created(t.api.post('/v1/secrets/api/keys', { name: 'ci' }))
  assert.equal(full.scope, 'full', 'scope defaults to full')
  const listed = (await t.api.get('/v1/secrets/api/keys')).body.items as { id: string; scope: string }[]
  assert.equal(listed.find((k) => k.id === ro.id)?.scope, 'read_only')
  assert.equal(listed.find((k) => k.id === full.id)?.scope, 'full')
  assertError(await t.api.post('/v1/secrets/api/keys', { name: 'x', scope: 'admin' }), 400, 'validation_error')

  const roApi = p.client(ro.api_key)
  const writes = apiKeyRoutes(p).filter((r) => isWriteRoute(r.method, r.config))
  assert.ok(writes.length > 50, `found ${writes.length} write routes`)
  for (const path of ['/v1/customers', '/v1/events/raw/bulk', '/v1/events', '/v1/secrets/api/keys', '/v1/customers/:id']) {
    assert.ok(writes.some((r) => r.url === path), `${path} is enumerated as a write route`)
  }

  const before = await tenantFingerprint(t.tenantId)
  for (const r of writes) {
    const body = r.method === 'DELETE' ? undefined : JSON.stringify({ external_id: 'ro-write', name: 'ro', events: [{ event_id: 'ro-1', event_name: 'call', external_customer_id: 'acme' }] })
    const res = await roApi.request(r.method, concrete(r.url).replace('ro_id', r.url.startsWith('/v1/customers') ? customer.id : 'ro_id'), body)
    assertError(res, 403, 'permission_denied', /read-only/)
  }
  assert.deepEqual(await tenantFingerprint(t.tenantId), before, 'no Postgres row of the tenant changed')
  // No aggregator runs here, so the spool keeps every batch ingest ever accepted.
  assert.equal(p.spool!.spool.left().events, 0, 'no event was accepted from the read-only key')

  // The same key reads: lists, single records, and the POST routes marked as reads.
  assert.equal((await roApi.get('/v1/customers')).body.pagination.total, 1)
  assert.equal((await roApi.get(`/v1/customers/${customer.id}`)).body.external_id, 'acme')
  assert.equal((await roApi.get(`/v1/meters/${meter.id}`)).status, 200)
  assert.equal((await roApi.post('/v1/customers/search', {})).status, 200)
  const u = await roApi.post(`/v1/meters/${meter.id}/usage`, { external_customer_id: 'acme', start_time: '2026-01-01T00:00:00Z', end_time: '2026-02-01T00:00:00Z' })
  assert.equal(u.status, 200, JSON.stringify(u.body))
  const reads = apiKeyRoutes(p).filter((r) => !isWriteRoute(r.method, r.config))
  for (const r of reads) {
    const res = await roApi.request(r.method, concrete(r.url), r.method === 'POST' ? '{}' : undefined)
    assert.ok(![401, 403].includes(res.status), `${r.method} ${r.url} answered ${res.status} to a read-only key: ${JSON.stringify(res.body)}`)
  }
  const readPosts = reads.filter((r) => r.method === 'POST').map((r) => r.url).sort()
  console.log(`# read-only keys: ${writes.length} write routes refused; ${reads.length} read routes open, of which POST: ${readPosts.join(', ')}`)

  // The full key still writes, ingest included (and the spool shows it).
  assert.equal((await p.client(full.api_key).post('/v1/customers', { external_id: 'by-full-key' })).status, 201)
  assert.equal((await p.client(full.api_key).post('/v1/events', { event_id: 'full-1', event_name: 'call', external_customer_id: 'acme' })).status, 202)
  assert.equal(p.spool!.spool.left().events, 1)
})
