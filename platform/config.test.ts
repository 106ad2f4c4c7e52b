import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ConfigError, loadConfig } from './config.js'

const env = { KAFKA_BROKERS: '127.0.0.1:9092' }

test('defaults describe the local stack', () => {
  const c = loadConfig(env)
  assert.equal(c.port, 8080)
  assert.equal(c.databaseUrl, 'postgres://meterline:meterline@127.0.0.1:54329/meterline')
  assert.deepEqual(c.kafkaBrokers, ['127.0.0.1:9092'])
  assert.equal(c.clickhouse.url, undefined, 'embedded chDB unless CLICKHOUSE_URL is set')
  assert.equal(c.finalizationDelayMinutes, 120)
  assert.deepEqual(c.ingestTimeWindow, { minTime: new Date('2000-01-01T00:00:00Z'), maxFutureMinutes: 5, maxAgeDays: 35 })
  assert.deepEqual(c.retention, { eventsRawDays: 0, meterEventsDays: 0, dedupHorizonDays: 37 })
  assert.deepEqual(c.http, { maxUrlBytes: 8192, maxHeaderBytes: 16384, trustProxy: false })
  assert.deepEqual(c.postgres, {
    acquireTimeoutMs: 1500, connectTimeoutMs: 1000, statementTimeoutMs: 30000, lockTimeoutMs: 5000, idleInTransactionTimeoutMs: 60000, noAnswerMs: 700, probeTimeoutMs: 500,
  })
  assert.deepEqual(c.abuse, {
    auth_failures: { limit: 20, windowSeconds: 300 },
    signup: { limit: 5, windowSeconds: 3600 },
    webhook_connection: { limit: 1200, windowSeconds: 60 },
    webhook_failures: { limit: 30, windowSeconds: 60 },
  })
  assert.equal(c.redisCommandTimeoutMs, 1500)
  const tuned = loadConfig({ ...env, INGEST_MIN_EVENT_TIME: '2020-01-01', INGEST_MAX_FUTURE_MINUTES: '60', PG_ACQUIRE_TIMEOUT_MS: '500' })
  assert.deepEqual([tuned.ingestTimeWindow.minTime.toISOString(), tuned.ingestTimeWindow.maxFutureMinutes, tuned.postgres.acquireTimeoutMs], ['2020-01-01T00:00:00.000Z', 60, 500])
})

test('HTTP_TRUST_PROXY: false, true, a hop count or a list of proxy addresses', () => {
  assert.equal(loadConfig({ ...env, HTTP_TRUST_PROXY: 'true' }).http.trustProxy, true)
  assert.equal(loadConfig({ ...env, HTTP_TRUST_PROXY: '10.0.0.0/8,127.0.0.1' }).http.trustProxy, '10.0.0.0/8,127.0.0.1')
  const hops = loadConfig({ ...env, HTTP_TRUST_PROXY: '2' }).http.trustProxy as (a: string, hop: number) => boolean
  assert.deepEqual([hops('10.0.0.1', 0), hops('10.0.0.1', 1), hops('10.0.0.1', 2)], [true, true, false])
})

test('bad values stop start-up with a message naming the variable', () => {
  assert.throws(() => loadConfig({ ...env, PORT: 'eighty' }), (e: Error) => e instanceof ConfigError && /PORT/.test(e.message))
  assert.throws(() => loadConfig({ ...env, DATABASE_URL: 'mysql://x' }), /DATABASE_URL must use postgres/)
  assert.throws(() => loadConfig({ KAFKA_BROKERS: 'nohostport' }), /KAFKA_BROKERS entry "nohostport"/)
  assert.throws(() => loadConfig({ ...env, CLICKHOUSE_URL: 'not a url' }), /CLICKHOUSE_URL/)
  assert.throws(() => loadConfig({ ...env, CLICKHOUSE_DATABASE: 'x; DROP' }), /CLICKHOUSE_DATABASE/)
  assert.throws(() => loadConfig({ ...env, INGEST_MIN_EVENT_TIME: 'last year' }), /INGEST_MIN_EVENT_TIME must be an ISO 8601/)
  assert.throws(() => loadConfig({ ...env, REDIS_COMMAND_TIMEOUT_MS: '10' }), /REDIS_COMMAND_TIMEOUT_MS must be an integer >= 100/)
  assert.throws(() => loadConfig({ METERLINE_DATA_DIR: '/nonexistent-dir' }), /KAFKA_BROKERS is not set/)
})

test('security settings: the outbound allow-list, the API key hash secret and the keys being rotated out', () => {
  const c = loadConfig(env)
  assert.deepEqual(c.outbound.allow, [], 'nothing is exempt from the SSRF guard by default')
  assert.equal(c.apiKeyHashing.secret.length, 32, 'a local default')
  assert.equal(c.apiKeyHashing.previous, undefined)
  assert.equal(loadConfig({ ...env, OUTBOUND_URL_ALLOW: 'localhost:8080,10.0.0.0/8' }).outbound.allow.length, 2)
  assert.throws(() => loadConfig({ ...env, OUTBOUND_URL_ALLOW: '10.0.0.0/40' }), /OUTBOUND_URL_ALLOW: "10.0.0.0\/40": bad CIDR range/)
  const prod = { ...env, NODE_ENV: 'production', INTEGRATIONS_ENCRYPTION_KEY: 'ab'.repeat(32) }
  assert.throws(() => loadConfig(prod), /API_KEY_HASH_SECRET is required when NODE_ENV=production/)
  const rotating = loadConfig({ ...prod, API_KEY_HASH_SECRET: 'cd'.repeat(32), API_KEY_HASH_SECRET_PREVIOUS: 'ef'.repeat(32), INTEGRATIONS_ENCRYPTION_KEY_PREVIOUS: '01'.repeat(32) })
  assert.deepEqual(rotating.apiKeyHashing, { secret: Buffer.from('cd'.repeat(32), 'hex'), previous: Buffer.from('ef'.repeat(32), 'hex') })
  assert.deepEqual(rotating.integrations.previousEncryptionKey, Buffer.from('01'.repeat(32), 'hex'))
  assert.throws(() => loadConfig({ ...prod, API_KEY_HASH_SECRET: 'cd'.repeat(32), API_KEY_HASH_SECRET_PREVIOUS: 'cd'.repeat(32) }), /API_KEY_HASH_SECRET_PREVIOUS is the same key/)
})

test('webhook fairness settings: defaults, and a tenant cap that could take every worker slot is refused', () => {
  const c = loadConfig(env).webhooks
  assert.deepEqual(c, { timeoutMs: 10_000, attempts: 5, backoffMs: 1000, workerConcurrency: 10, endpointConcurrency: 2, tenantConcurrency: 4, circuitFailures: 5, circuitCooldownMs: 30_000 })
  assert.throws(() => loadConfig({ ...env, WEBHOOK_TENANT_CONCURRENCY: '10' }), /WEBHOOK_TENANT_CONCURRENCY \(10\) must be below WEBHOOK_WORKER_CONCURRENCY \(10\)/)
  assert.throws(() => loadConfig({ ...env, WEBHOOK_ENDPOINT_CONCURRENCY: '5' }), /WEBHOOK_ENDPOINT_CONCURRENCY \(5\) must not exceed WEBHOOK_TENANT_CONCURRENCY \(4\)/)
  assert.throws(() => loadConfig({ ...env, WEBHOOK_ENDPOINT_CONCURRENCY: '0' }), /WEBHOOK_ENDPOINT_CONCURRENCY must be an integer >= 1/)
  assert.equal(loadConfig({ ...env, WEBHOOK_CIRCUIT_FAILURES: '0' }).webhooks.circuitFailures, 0, '0: the circuit never opens')
})

test('PRICING_PARSER: rule-based by default; openai needs its API key', () => {
  assert.deepEqual(loadConfig(env).pricingParser, { kind: 'deterministic' })
  assert.deepEqual(loadConfig({ ...env, PRICING_PARSER: 'openai', PRICING_LLM_API_KEY: 'sk-1' }).pricingParser, {
    kind: 'openai', llm: { url: 'https://api.openai.com/v1', apiKey: 'sk-1', model: 'gpt-4o-mini', timeoutMs: 15000 },
  })
  assert.throws(() => loadConfig({ ...env, PRICING_PARSER: 'openai' }), /PRICING_LLM_API_KEY is required with PRICING_PARSER=openai/)
  assert.throws(() => loadConfig({ ...env, PRICING_PARSER: 'gpt' }), /PRICING_PARSER must be one of deterministic, openai/)
})

test('AUTH_JWT_SECRET: unset refuses bearer tokens; a short one stops start-up', () => {
  assert.equal(loadConfig(env).authJwtSecret, null)
  assert.deepEqual(loadConfig({ ...env, AUTH_JWT_SECRET: 'x'.repeat(32) }).authJwtSecret, Buffer.from('x'.repeat(32)))
  assert.throws(() => loadConfig({ ...env, AUTH_JWT_SECRET: 'short' }), /AUTH_JWT_SECRET must be at least 32 bytes/)
})
