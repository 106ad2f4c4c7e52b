// The abuse limiter on the real Redis of the test stack: two limiters on two connections stand
// for two processes behind a load balancer and share one count; windows end; Redis away lets
// requests through (counted as unchecked).
import { after, before, test } from 'node:test'
import { once } from 'node:events'
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { loadConfig } from './config.js'
import { createQueueRedis } from './redis.js'
import { AbuseLimiter, type AbuseRules } from './abuse-limit.js'
import { TooManyRequestsError } from './errors.js'
import { rateLimitUnchecked } from './metrics.js'

const config = loadConfig(process.env)
const prefix = `mltest-abuse-${randomBytes(3).toString('hex')}`
const rules: AbuseRules = {
  auth_failures: { limit: 3, windowSeconds: 60 },
  signup: { limit: 2, windowSeconds: 60 },
  webhook_connection: { limit: 0, windowSeconds: 60 },
  webhook_failures: { limit: 2, windowSeconds: 60 },
}
const a = createQueueRedis(config.redisUrl, 1500)
const b = createQueueRedis(config.redisUrl, 1500)
// No offline queue on these connections (a request must not wait for Redis): wait until they are up.
before(async () => {
  for (const r of [a, b]) if (r.status !== 'ready') await once(r, 'ready')
})
after(async () => {
  const keys = await a.keys(`${prefix}:*`)
  if (keys.length) await a.del(...keys)
  await a.quit()
  await b.quit()
})

test('two processes share one count per address: the limit is reached across both, other addresses unaffected', async () => {
  const one = new AbuseLimiter(a, prefix, rules)
  const two = new AbuseLimiter(b, prefix, rules)
  assert.equal(await one.count('auth_failures', '203.0.113.1'), 0)
  assert.equal(await two.count('auth_failures', '203.0.113.1'), 0)
  assert.equal(await one.blockedFor('auth_failures', '203.0.113.1'), 0, 'two failures of three: not blocked')
  assert.equal(await two.count('auth_failures', '203.0.113.1'), 0, 'the third failure is still within the limit')
  const left = await one.blockedFor('auth_failures', '203.0.113.1')
  assert.ok(left > 0 && left <= 60, `blocked for the rest of the window (${left} s)`)
  assert.ok((await two.blockedFor('auth_failures', '203.0.113.1')) > 0, 'the other process sees the block')
  await assert.rejects(two.assertNotBlocked('auth_failures', '203.0.113.1'), (err: unknown) => err instanceof TooManyRequestsError && err.retryAfterSeconds > 0)
  assert.equal(await two.blockedFor('auth_failures', '203.0.113.2'), 0, 'another address is not blocked')
  assert.equal(await one.blockedFor('webhook_failures', '203.0.113.1'), 0, 'rules count separately')
})

test('admit: counts every call and refuses beyond the limit until the window ends; limit 0 is no limit', async () => {
  const one = new AbuseLimiter(a, prefix, rules)
  await one.admit('signup', '198.51.100.9')
  await one.admit('signup', '198.51.100.9')
  await assert.rejects(one.admit('signup', '198.51.100.9'), TooManyRequestsError)
  // The window is the counter's expiry in Redis, set by its first call; its end is the key's removal.
  const key = `${prefix}:abuse:signup:198.51.100.9`
  const ttl = await a.pttl(key)
  assert.ok(ttl > 0 && ttl <= 60_000, `the window expires with the counter (${ttl} ms left)`)
  await a.del(key)
  await one.admit('signup', '198.51.100.9')
  for (let i = 0; i < 10; i++) await one.admit('webhook_connection', 'stripe:t:e')
})

test('Redis unreachable: the request passes and is counted as unchecked', async () => {
  const dead = createQueueRedis('redis://127.0.0.1:1', 200)
  dead.on('error', () => undefined)
  const before = (await rateLimitUnchecked.get()).values[0]?.value ?? 0
  const limiter = new AbuseLimiter(dead, prefix, rules)
  assert.equal(await limiter.blockedFor('auth_failures', '203.0.113.1'), 0)
  await limiter.admit('signup', '203.0.113.1')
  assert.equal((await rateLimitUnchecked.get()).values[0]?.value ?? 0, before + 2)
  dead.disconnect()
})
