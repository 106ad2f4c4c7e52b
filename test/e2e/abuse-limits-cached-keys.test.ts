// Key guessing with the API-key cache on (as in production): a cached key answers without a
// Postgres lookup, and its address is looked at in the same Redis round trip as the request
// limits. The answers must not change: a blocked address gets the same 429 for a cached valid
// key, a cached invalid one, and a valid key asking for an unknown environment (a 404 there
// would tell the guesser the key exists). abuse-limits.test.ts runs the same rules uncached.
import { test, after } from 'node:test'
import assert from 'node:assert/strict'
import { usePlatform, testConfig } from '../support/platform.js'
import { assertError } from '../support/assertions.js'
import { createRedis } from '../../platform/redis.js'

const p = usePlatform({
  services: ['billing-api'],
  config: {
    apiKeyCacheTtlMs: 60_000,
    http: { ...testConfig().http, trustProxy: true },
    requestRateLimit: { windowSeconds: 60, perKey: 1000, perTenant: 1000 },
    abuse: {
      auth_failures: { limit: 3, windowSeconds: 300 },
      signup: { limit: 0, windowSeconds: 60 },
      webhook_connection: { limit: 0, windowSeconds: 60 },
      webhook_failures: { limit: 0, windowSeconds: 60 },
    },
  },
})

const from = (address: string) => ({ 'x-forwarded-for': address })

test('a blocked address gets the same 429 for a cached valid key, a cached invalid key and an unknown environment', async () => {
  const t = await p.newTenant()
  const guesser = '203.0.113.30'
  // The valid key is cached by a request from another address.
  assert.equal((await t.api.request('GET', '/v1/customers', undefined, from('203.0.113.31'))).status, 200)
  for (let i = 0; i < 3; i++) {
    // The first answer comes from Postgres, the next two from the cache.
    assertError(await p.client('ml_guess_cached').request('GET', '/v1/customers', undefined, from(guesser)), 401, 'permission_denied', /^invalid or expired API key$/)
  }
  const answers = [
    await fetch(`${p.url}/v1/customers`, { headers: { 'x-api-key': 'ml_guess_cached', ...from(guesser) } }),
    await fetch(`${p.url}/v1/customers`, { headers: { 'x-api-key': t.apiKey, ...from(guesser) } }),
    await fetch(`${p.url}/v1/customers`, { headers: { 'x-api-key': t.apiKey, 'x-environment-id': 'env_does_not_exist', ...from(guesser) } }),
  ]
  for (const res of answers) {
    assert.equal(res.status, 429)
    const body = await res.json() as { message: string }
    assert.match(body.message, /^too many failed authentications from this address; retry after \d+ s$/)
  }
  // The same key from another address, and an unknown environment there, answer as usual.
  assert.equal((await t.api.request('GET', '/v1/customers', undefined, from('203.0.113.31'))).status, 200)
  const unknownEnv = await fetch(`${p.url}/v1/customers`, { headers: { 'x-api-key': t.apiKey, 'x-environment-id': 'env_does_not_exist', ...from('203.0.113.31') } })
  assert.equal(unknownEnv.status, 404)
})

test('a request with a cached key makes one Redis round trip: the address look and both request limits in one script', async () => {
  const t = await p.newTenant()
  assert.equal((await t.api.request('GET', '/v1/customers', undefined, from('203.0.113.40'))).status, 200)
  assertError(await p.client('ml_guess_once').request('GET', '/v1/customers', undefined, from('203.0.113.41')), 401, 'permission_denied', /^invalid/)
  const watcher = createRedis(p.config.redisUrl)
  after(() => watcher.disconnect())
  const monitor = await watcher.monitor()
  after(() => monitor.disconnect())
  const commands: string[][] = []
  // Commands a script runs show as well, with the source "lua": only what clients sent counts.
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source !== 'lua' && args.some((a) => a.startsWith(`${p.config.redisPrefix}:`))) commands.push(args)
  })
  // MONITOR starts on its own connection; a marker command tells when it is listening.
  const marker = createRedis(p.config.redisUrl)
  after(() => marker.quit())
  for (let i = 0; i < 50 && !commands.some((c) => c.includes(`${p.config.redisPrefix}:marker`)); i++) {
    await marker.get(`${p.config.redisPrefix}:marker`)
    await new Promise((r) => setTimeout(r, 20))
  }
  commands.length = 0
  for (let i = 0; i < 5; i++) assert.equal((await t.api.request('GET', '/v1/customers', undefined, from('203.0.113.40'))).status, 200)
  for (let i = 0; i < 2; i++) assertError(await p.client('ml_guess_once').request('GET', '/v1/customers', undefined, from('203.0.113.41')), 401, 'permission_denied', /^invalid/)
  await new Promise((r) => setTimeout(r, 200))
  const scripts = commands.filter((c) => /^eval/i.test(c[0]!))
  assert.equal(scripts.length, 7, JSON.stringify(commands))
  assert.equal(commands.length, 7, `nothing but the one script per request: ${JSON.stringify(commands)}`)
  assert.equal(scripts.filter((c) => c.some((a) => a.includes(':abuse:auth_failures:203.0.113.40'))).length, 5, 'each valid request looked at its address')
})
