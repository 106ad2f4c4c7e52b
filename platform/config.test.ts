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
})

test('bad values stop start-up with a message naming the variable', () => {
  assert.throws(() => loadConfig({ ...env, PORT: 'eighty' }), (e: Error) => e instanceof ConfigError && /PORT/.test(e.message))
  assert.throws(() => loadConfig({ ...env, DATABASE_URL: 'mysql://x' }), /DATABASE_URL must use postgres/)
  assert.throws(() => loadConfig({ KAFKA_BROKERS: 'nohostport' }), /KAFKA_BROKERS entry "nohostport"/)
  assert.throws(() => loadConfig({ ...env, CLICKHOUSE_URL: 'not a url' }), /CLICKHOUSE_URL/)
  assert.throws(() => loadConfig({ ...env, CLICKHOUSE_DATABASE: 'x; DROP' }), /CLICKHOUSE_DATABASE/)
  assert.throws(() => loadConfig({ METERLINE_DATA_DIR: '/nonexistent-dir' }), /KAFKA_BROKERS is not set/)
})
