// INTEGRATIONS_ENCRYPTION_KEY is validated once with the rest of the configuration.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfig } from '../../platform/config.js'

const env = { KAFKA_BROKERS: '127.0.0.1:9092' }

test('the encryption key: 32 bytes as hex or base64, a dev default only outside production', () => {
  assert.equal(loadConfig(env).integrations.encryptionKey.length, 32, 'local default')
  assert.throws(() => loadConfig({ ...env, NODE_ENV: 'production' }), /INTEGRATIONS_ENCRYPTION_KEY is required when NODE_ENV=production/)
  const hex = 'ab'.repeat(32)
  assert.deepEqual(loadConfig({ ...env, NODE_ENV: 'production', INTEGRATIONS_ENCRYPTION_KEY: hex, API_KEY_HASH_SECRET: 'cd'.repeat(32) }).integrations.encryptionKey, Buffer.from(hex, 'hex'))
  const b64 = Buffer.alloc(32, 5).toString('base64')
  assert.deepEqual(loadConfig({ ...env, INTEGRATIONS_ENCRYPTION_KEY: b64 }).integrations.encryptionKey, Buffer.alloc(32, 5))
  assert.throws(() => loadConfig({ ...env, INTEGRATIONS_ENCRYPTION_KEY: 'tooshort' }), /INTEGRATIONS_ENCRYPTION_KEY must be 32 bytes/)
  assert.throws(() => loadConfig({ ...env, STRIPE_API_BASE: 'ftp://x' }), /STRIPE_API_BASE/)
  assert.throws(() => loadConfig({ ...env, INTEGRATION_EVENTS_RATE_LIMIT_PER_SECOND: '0' }), /INTEGRATION_EVENTS_RATE_LIMIT_PER_SECOND/)
})
