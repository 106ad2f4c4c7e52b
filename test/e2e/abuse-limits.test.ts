// Abuse limits on what callers without a valid API key can do (issue #24), through HTTP with the
// real Redis: key guessing per source address (429, the same answer for a valid key as for an
// invalid one, a metric), signup per address, inbound provider webhooks per connection and
// failed ones per address. HTTP_TRUST_PROXY=true, so each test is its own address through
// X-Forwarded-For.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { usePlatform, testConfig } from '../support/platform.js'
import { assertError } from '../support/assertions.js'

const p = usePlatform({
  services: ['billing-api'],
  config: {
    apiKeyCacheTtlMs: 0,
    signupEnabled: true,
    http: { ...testConfig().http, trustProxy: true },
    abuse: {
      auth_failures: { limit: 3, windowSeconds: 300 },
      signup: { limit: 2, windowSeconds: 3600 },
      webhook_connection: { limit: 4, windowSeconds: 60 },
      webhook_failures: { limit: 2, windowSeconds: 60 },
    },
  },
})

const from = (address: string) => ({ 'x-forwarded-for': address })

async function metric(name: string, labels = ''): Promise<number> {
  const text = await (await fetch(`${p.url}/metrics`)).text()
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `))
  return line ? Number(line.split(' ')[1]) : 0
}

test('key guessing: three failures per address, then 429 for every key from that address, valid or not; other addresses unaffected', async () => {
  const t = await p.newTenant()
  const guesser = '203.0.113.10'
  const failuresBefore = await metric('meterline_auth_failures_total')
  const limitedBefore = await metric('meterline_abuse_limited_total', '{limit="auth_failures"}')
  for (let i = 0; i < 3; i++) {
    const res = await p.client(`ml_guess${i}`).request('GET', '/v1/customers', undefined, from(guesser))
    assertError(res, 401, 'permission_denied', /^invalid or expired API key$/)
  }
  const guessed = await fetch(`${p.url}/v1/customers`, { headers: { 'x-api-key': 'ml_guess4', ...from(guesser) } })
  const valid = await fetch(`${p.url}/v1/customers`, { headers: { 'x-api-key': t.apiKey, ...from(guesser) } })
  const other = await fetch(`${p.url}/v1/meters`, { headers: { 'x-api-key': t.apiKey, ...from(guesser) } })
  for (const res of [guessed, valid, other]) {
    assert.equal(res.status, 429)
    const body = await res.json() as { code: string; http_status_code: number; message: string }
    assert.deepEqual({ ...body, message: body.message.replace(/\d+ s$/, 'N s') }, {
      code: 'too_many_requests', http_status_code: 429, message: 'too many failed authentications from this address; retry after N s',
    }, 'the same answer whether the key exists or not')
    assert.ok(Number(res.headers.get('retry-after')) > 0)
  }
  // Another address with the same valid key, and the guesser's tenant itself, are not affected.
  assert.equal((await t.api.request('GET', '/v1/customers', undefined, from('203.0.113.11'))).status, 200)
  assert.equal(await metric('meterline_auth_failures_total'), failuresBefore + 3)
  assert.equal(await metric('meterline_abuse_limited_total', '{limit="auth_failures"}'), limitedBefore + 3)
})

test('a missing key is not a guess: 401 without counting against the address', async () => {
  const t = await p.newTenant()
  for (let i = 0; i < 5; i++) assertError(await p.client().request('GET', '/v1/customers', undefined, from('203.0.113.20')), 401, 'permission_denied', /missing API key/)
  assert.equal((await t.api.request('GET', '/v1/customers', undefined, from('203.0.113.20'))).status, 200)
})

test('signup: two per address and window, then 429; another address still signs up', async () => {
  const signup = (address: string, n: number) => p.client().request('POST', '/v1/signup', { tenant_name: `Signup ${address} ${n}`, email: `owner${n}@example.com` }, from(address))
  assert.equal((await signup('198.51.100.30', 1)).status, 201)
  assert.equal((await signup('198.51.100.30', 2)).status, 201)
  const refused = await signup('198.51.100.30', 3)
  assertError(refused, 429, 'too_many_requests', /too many signups from this address/)
  const [{ n }] = await p.ctx.orm.em.fork().getConnection().execute(`SELECT count(*)::int AS n FROM tenants WHERE name = 'Signup 198.51.100.30 3'`)
  assert.equal(n, 0, 'the refused signup created no tenant')
  assert.equal((await signup('198.51.100.31', 4)).status, 201)
})

test('inbound webhooks: refused deliveries block their address; every connection takes a bounded number per window', async () => {
  const t = await p.newTenant()
  const path = `/webhooks/stripe/${t.tenantId}/${t.environments.production}`
  const deliver = (address: string) => p.client().request('POST', path, { id: 'evt_1', type: 'invoice.paid' }, { ...from(address), 'stripe-signature': 't=1,v1=forged' })
  // No Stripe connection in this environment: 404, counted as a refused delivery of the address.
  assertError(await deliver('192.0.2.40'), 404, 'not_found')
  assertError(await deliver('192.0.2.40'), 404, 'not_found')
  assertError(await deliver('192.0.2.40'), 429, 'too_many_requests', /rejected webhook deliveries from this address/)
  // The connection's own limit (4 per window) counts every delivery to its path, from any address.
  assertError(await deliver('192.0.2.41'), 404, 'not_found')
  assertError(await deliver('192.0.2.42'), 404, 'not_found')
  assertError(await deliver('192.0.2.43'), 429, 'too_many_requests', /too many webhook deliveries for this connection/)
  // Another connection (the development environment) is not affected.
  assertError(await p.client().request('POST', `/webhooks/stripe/${t.tenantId}/${t.environments.development}`, {}, from('192.0.2.44')), 404, 'not_found')
})
