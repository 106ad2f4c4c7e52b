// Secrets at rest: API keys as keyed hashes (legacy SHA-256 rows accepted and upgraded), webhook
// signing secrets encrypted (legacy plaintext rows sealed), and the rotation procedure for the
// encryption key and the hash secret. Rotations are scoped to the test's tenant, so other
// tests' rows in the shared test database are untouched.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash, createHmac } from 'node:crypto'
import Fastify from 'fastify'
import { systemClock } from '../platform/clock.js'
import type { Config } from '../platform/config.js'
import { newId } from '../platform/ids.js'
import { createAuthenticator } from '../billing-api/auth/authenticate.js'
import { schemeOf } from '../billing-api/auth/api-key.js'
import { connectionAad } from '../billing-api/integrations/connections.js'
import { decryptJson } from '../platform/secrets-at-rest.js'
import { openWebhookSecret } from '../billing-api/webhooks/secret-at-rest.js'
import { sqlOn, usePlatform } from '../test/support/platform.js'
import { created } from '../test/support/fixtures.js'
import { rotateSecrets } from './rotate-secrets.js'

const p = usePlatform({ services: ['billing-api'], config: { apiKeyCacheTtlMs: 0 } })
const sql = sqlOn(p)

const K2 = Buffer.alloc(32, 0x42)
const S2 = Buffer.alloc(32, 0x53)

/** Who a key authenticates as under the given hashing settings: a real fastify request through the hook. */
async function whoIs(hashing: Config['apiKeyHashing'], key: string): Promise<{ status: number; tenant?: string }> {
  const app = Fastify()
  const auth = createAuthenticator(p.ctx.orm, systemClock, 0, hashing)
  app.addHook('onRequest', auth.hook)
  app.setErrorHandler((_err, _req, reply) => reply.code(401).send({}))
  app.get('/who', async (request) => ({ tenant: request.auth.tenantId }))
  const res = await app.inject({ method: 'GET', url: '/who', headers: { 'x-api-key': key } })
  await app.close()
  return { status: res.statusCode, tenant: res.statusCode === 200 ? (res.json() as { tenant: string }).tenant : undefined }
}

const legacyKey = async (tenantId: string, environmentId: string, userId: string, plaintext: string) => {
  const id = newId('key')
  await sql(
    `INSERT INTO api_keys (id, tenant_id, environment_id, user_id, name, key_hash, display_id) VALUES (?, ?, ?, ?, 'legacy', ?, 'ml_...')`,
    [id, tenantId, environmentId, userId, createHash('sha256').update(plaintext).digest('hex')],
  )
  return id
}

test('stored forms: keyed API key hashes and encrypted webhook secrets; nothing in plaintext', async () => {
  const t = await p.newTenant()
  const [key] = await sql(`SELECT key_hash, key_hash_scheme FROM api_keys WHERE tenant_id = ?`, [t.tenantId])
  const digest = createHash('sha256').update(t.apiKey).digest('hex')
  assert.equal(key.key_hash, createHmac('sha256', p.config.apiKeyHashing.secret).update(digest).digest('hex'))
  assert.equal(key.key_hash_scheme, schemeOf(p.config.apiKeyHashing.secret))
  assert.match(key.key_hash_scheme, /^hmac-sha256:[0-9a-f]{12}$/)

  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/x' }))
  const [row] = await sql(`SELECT tenant_id, environment_id, id, secret, secret_encrypted FROM webhook_endpoints WHERE id = ?`, [ep.id])
  assert.equal(row.secret, null)
  assert.ok(!row.secret_encrypted.includes(ep.secret.slice(6)))
  assert.equal(decryptJson(p.config.integrations.encryptionKey, `webhook_endpoints/${t.tenantId}/${t.environments.production}/${ep.id}`, row.secret_encrypted), ep.secret)
  assert.equal((await t.api.get(`/v1/webhooks/endpoints/${ep.id}`)).body.secret, `whsec_****${ep.secret.slice(-4)}`)
})

test('legacy rows: a SHA-256 key works and is upgraded on use; the rotation script seals plaintext secrets and upgrades unused keys', async () => {
  const t = await p.newTenant()
  const env = t.environments.production
  const used = await legacyKey(t.tenantId, env, t.userId, 'ml_legacy-used-' + t.tenantId)
  const unused = await legacyKey(t.tenantId, env, t.userId, 'ml_legacy-unused-' + t.tenantId)
  const legacySecret = 'whsec_' + Buffer.alloc(24, 7).toString('base64')
  const epId = newId('wh')
  await sql(`INSERT INTO webhook_endpoints (id, tenant_id, environment_id, url, secret) VALUES (?, ?, ?, 'http://127.0.0.1:9/legacy', ?)`, [epId, t.tenantId, env, legacySecret])

  // the legacy key authenticates over HTTP, and its row now holds the keyed hash
  assert.equal((await p.client('ml_legacy-used-' + t.tenantId).get(`/v1/tenants/${t.tenantId}`)).status, 200)
  const [upgraded] = await sql(`SELECT key_hash, key_hash_scheme FROM api_keys WHERE id = ?`, [used])
  assert.equal(upgraded.key_hash_scheme, schemeOf(p.config.apiKeyHashing.secret))
  assert.equal(upgraded.key_hash, createHmac('sha256', p.config.apiKeyHashing.secret).update(createHash('sha256').update('ml_legacy-used-' + t.tenantId).digest('hex')).digest('hex'))
  assert.equal((await p.client('ml_legacy-used-' + t.tenantId).get(`/v1/tenants/${t.tenantId}`)).status, 200, 'and still works')
  // the plaintext secret is still readable (obscured) before the script runs
  assert.equal((await t.api.get(`/v1/webhooks/endpoints/${epId}`)).body.secret, `whsec_****${legacySecret.slice(-4)}`)

  const report = await rotateSecrets(p.ctx.orm, p.config, { tenantId: t.tenantId })
  assert.deepEqual(report, { webhookSecretsSealed: 1, connectionsReencrypted: 0, apiKeysUpgraded: 1, apiKeysAwaitingUse: 0, undecryptable: 0 })
  const [sealed] = await sql(`SELECT id, tenant_id, environment_id, secret, secret_encrypted FROM webhook_endpoints WHERE id = ?`, [epId])
  assert.equal(sealed.secret, null)
  assert.deepEqual(openWebhookSecret(p.config.integrations, sealed), { value: legacySecret, stale: false })
  const [unusedRow] = await sql(`SELECT key_hash_scheme FROM api_keys WHERE id = ?`, [unused])
  assert.equal(unusedRow.key_hash_scheme, schemeOf(p.config.apiKeyHashing.secret))
  assert.equal((await p.client('ml_legacy-unused-' + t.tenantId).get(`/v1/tenants/${t.tenantId}`)).status, 200)
  // idempotent
  assert.deepEqual(await rotateSecrets(p.ctx.orm, p.config, { tenantId: t.tenantId }), { webhookSecretsSealed: 0, connectionsReencrypted: 0, apiKeysUpgraded: 0, apiKeysAwaitingUse: 0, undecryptable: 0 })
})

test('rotation: new encryption key and hash secret with the previous ones set, the script, then the previous ones removed', async () => {
  const t = await p.newTenant()
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/x' }))
  const conn = await created(t.api.post('/v1/integrations/connections', {
    provider: 'generic_http', name: 'ERP', credentials: { api_key: 'erp-key-123', webhook_secret: 'erp-secret' }, settings: { base_url: 'http://127.0.0.1:9/' },
  }))
  const idle = await created(t.api.post('/v1/secrets/api/keys', { name: 'idle' }))
  const old = p.config
  const K1 = old.integrations.encryptionKey
  const S1 = old.apiKeyHashing.secret
  // step 1: deploy with the new keys, the old ones as _PREVIOUS
  const during: Config = { ...old, integrations: { ...old.integrations, encryptionKey: K2, previousEncryptionKey: K1 }, apiKeyHashing: { secret: S2, previous: S1 } }
  assert.deepEqual(await whoIs(during.apiKeyHashing, t.apiKey), { status: 200, tenant: t.tenantId }, 'a key under the previous secret works')
  const [bootstrap] = await sql(`SELECT key_hash_scheme FROM api_keys WHERE tenant_id = ? AND name = 'bootstrap'`, [t.tenantId])
  assert.equal(bootstrap.key_hash_scheme, schemeOf(S2), 'and was re-hashed under the new secret')
  // step 2: the script re-encrypts; API keys not used yet are counted
  assert.deepEqual(await rotateSecrets(p.ctx.orm, during, { tenantId: t.tenantId }), { webhookSecretsSealed: 1, connectionsReencrypted: 1, apiKeysUpgraded: 0, apiKeysAwaitingUse: 1, undecryptable: 0 })
  const [w] = await sql(`SELECT id, tenant_id, environment_id, secret, secret_encrypted FROM webhook_endpoints WHERE id = ?`, [ep.id])
  assert.deepEqual(openWebhookSecret({ encryptionKey: K2 }, w), { value: ep.secret, stale: false }, 'opens under the new key alone')
  assert.throws(() => openWebhookSecret({ encryptionKey: K1 }, w))
  const [c] = await sql(`SELECT id, tenant_id, environment_id, credentials_encrypted FROM integration_connections WHERE id = ?`, [conn.id])
  assert.deepEqual(decryptJson(K2, connectionAad(c), c.credentials_encrypted), { api_key: 'erp-key-123', webhook_secret: 'erp-secret' })
  // step 3: once the report shows 0 keys awaiting use, drop _PREVIOUS; a key never used in between stops working
  const after = { secret: S2 }
  assert.deepEqual(await whoIs(after, t.apiKey), { status: 200, tenant: t.tenantId })
  assert.equal((await whoIs(after, idle.api_key)).status, 401)
  assert.equal((await whoIs(during.apiKeyHashing, idle.api_key)).status, 200, 'used while _PREVIOUS was set, it is upgraded')
  assert.equal((await whoIs(after, idle.api_key)).status, 200)

  // back to this platform's keys, so the shared test database stays readable by later runs
  const back: Config = { ...old, integrations: { ...old.integrations, previousEncryptionKey: K2 }, apiKeyHashing: { secret: S1, previous: S2 } }
  assert.deepEqual(await rotateSecrets(p.ctx.orm, back, { tenantId: t.tenantId }), { webhookSecretsSealed: 1, connectionsReencrypted: 1, apiKeysUpgraded: 0, apiKeysAwaitingUse: 2, undecryptable: 0 })
  const [again] = await sql(`SELECT id, tenant_id, environment_id, secret, secret_encrypted FROM webhook_endpoints WHERE id = ?`, [ep.id])
  assert.deepEqual(openWebhookSecret(old.integrations, again), { value: ep.secret, stale: false })
})
