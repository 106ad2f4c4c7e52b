// Brings every secret at rest under the current keys, and reports what it could not:
//   node --import tsx scripts/rotate-secrets.ts
// - webhook signing secrets: plaintext rows (from before encryption) and rows under
//   INTEGRATIONS_ENCRYPTION_KEY_PREVIOUS are sealed under INTEGRATIONS_ENCRYPTION_KEY;
// - integration credentials under the previous key are re-encrypted under the current one;
// - API keys still stored as a bare SHA-256 digest get the keyed hash (possible without the
//   key: the HMAC is taken over that digest). Keys hashed under API_KEY_HASH_SECRET_PREVIOUS
//   cannot be re-hashed without the key itself: they are upgraded on their next use, and
//   the report counts those left (keep the previous secret until that is 0, or reissue them).
// Idempotent: rows already current are only read. Each table is rewritten in one transaction.
// A row that opens under neither key is left alone and counted (`undecryptable`).
// scripts/migrate.ts runs it after the Postgres migrations, so an upgrade leaves no plaintext.
import { pathToFileURL } from 'node:url'
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql'
import { keyedFromDigest, LEGACY_SCHEME, schemeOf } from '../billing-api/auth/index.js'
import { connectionAad } from '../billing-api/integrations/index.js'
import { decryptJsonRotating, encryptJson } from '../platform/secrets-at-rest.js'
import { openWebhookSecret, sealWebhookSecret } from '../billing-api/webhooks/index.js'
import type { Config } from '../platform/config.js'

export interface RotationReport {
  webhookSecretsSealed: number
  connectionsReencrypted: number
  apiKeysUpgraded: number
  /** keys still hashed under API_KEY_HASH_SECRET_PREVIOUS (or an older secret): upgraded on use */
  apiKeysAwaitingUse: number
  /** rows that decrypt under neither the current nor the previous key */
  undecryptable: number
}

/** Rows of one tenant only (tests; a tenant-by-tenant rotation) */
export interface RotationScope {
  tenantId?: string
}

type Conn = ReturnType<EntityManager['getConnection']>

const tenantFilter = (scope: RotationScope) => (scope.tenantId ? { sql: 'WHERE tenant_id = ?', params: [scope.tenantId] } : { sql: '', params: [] })

/** Opens a stored value; null when neither key does (counted, not fatal). */
function tryOpen<T>(open: () => { value: T; stale: boolean }): { value: T; stale: boolean } | null {
  try {
    return open()
  } catch {
    return null
  }
}

interface Counts {
  changed: number
  undecryptable: number
}

async function sealWebhookSecrets(conn: Conn, config: Config, scope: RotationScope): Promise<Counts> {
  const f = tenantFilter(scope)
  const rows = (await conn.execute(`SELECT id, tenant_id, environment_id, secret, secret_encrypted FROM webhook_endpoints ${f.sql} FOR UPDATE`, f.params)) as {
    id: string; tenant_id: string; environment_id: string; secret: string | null; secret_encrypted: string | null
  }[]
  const n: Counts = { changed: 0, undecryptable: 0 }
  for (const row of rows) {
    const opened = tryOpen(() => openWebhookSecret(config.integrations, row))
    if (!opened) n.undecryptable++
    if (!opened?.stale) continue
    await conn.execute(`UPDATE webhook_endpoints SET secret = NULL, secret_encrypted = ?, updated_at = now() WHERE id = ?`, [sealWebhookSecret(config.integrations, row, opened.value), row.id])
    n.changed++
  }
  return n
}

async function reencryptConnections(conn: Conn, config: Config, scope: RotationScope): Promise<Counts> {
  const f = tenantFilter(scope)
  const rows = (await conn.execute(`SELECT id, tenant_id, environment_id, credentials_encrypted FROM integration_connections ${f.sql} FOR UPDATE`, f.params)) as {
    id: string; tenant_id: string; environment_id: string; credentials_encrypted: string
  }[]
  const n: Counts = { changed: 0, undecryptable: 0 }
  for (const row of rows) {
    const opened = tryOpen(() => decryptJsonRotating<unknown>(config.integrations, connectionAad(row), row.credentials_encrypted))
    if (!opened) n.undecryptable++
    if (!opened?.stale) continue
    await conn.execute(`UPDATE integration_connections SET credentials_encrypted = ?, updated_at = now() WHERE id = ?`, [encryptJson(config.integrations.encryptionKey, connectionAad(row), opened.value), row.id])
    n.changed++
  }
  return n
}

async function upgradeLegacyApiKeys(conn: Conn, config: Config, scope: RotationScope): Promise<{ upgraded: number; awaitingUse: number }> {
  const and = scope.tenantId ? { sql: 'AND tenant_id = ?', params: [scope.tenantId] } : { sql: '', params: [] }
  const legacy = (await conn.execute(`SELECT id, key_hash FROM api_keys WHERE key_hash_scheme = ? ${and.sql} FOR UPDATE`, [LEGACY_SCHEME, ...and.params])) as { id: string; key_hash: string }[]
  for (const row of legacy) {
    const next = keyedFromDigest(config.apiKeyHashing.secret, row.key_hash)
    await conn.execute(`UPDATE api_keys SET key_hash = ?, key_hash_scheme = ?, updated_at = now() WHERE id = ?`, [next.hash, next.scheme, row.id])
  }
  const [left] = (await conn.execute(
    `SELECT count(*)::int AS n FROM api_keys WHERE key_hash_scheme <> ? AND status = 'published' ${and.sql}`,
    [schemeOf(config.apiKeyHashing.secret), ...and.params],
  )) as { n: number }[]
  return { upgraded: legacy.length, awaitingUse: left!.n }
}

export async function rotateSecrets(orm: MikroORM, config: Config, scope: RotationScope = {}): Promise<RotationReport> {
  const em = orm.em.fork()
  const webhooks = await em.transactional((tx) => sealWebhookSecrets(tx.getConnection(), config, scope))
  const connections = await em.transactional((tx) => reencryptConnections(tx.getConnection(), config, scope))
  const keys = await em.transactional((tx) => upgradeLegacyApiKeys(tx.getConnection(), config, scope))
  return {
    webhookSecretsSealed: webhooks.changed,
    connectionsReencrypted: connections.changed,
    apiKeysUpgraded: keys.upgraded,
    apiKeysAwaitingUse: keys.awaitingUse,
    undecryptable: webhooks.undecryptable + connections.undecryptable,
  }
}

export function describeRotation(r: RotationReport): string {
  return [
    `webhook signing secrets sealed under the current key: ${r.webhookSecretsSealed}`,
    `integration credentials re-encrypted under the current key: ${r.connectionsReencrypted}`,
    `API keys upgraded from SHA-256 to the keyed hash: ${r.apiKeysUpgraded}`,
    `API keys still under an older hash secret (upgraded on next use): ${r.apiKeysAwaitingUse}`,
    ...(r.undecryptable ? [`WARNING: rows that open under neither INTEGRATIONS_ENCRYPTION_KEY nor _PREVIOUS, left as they are: ${r.undecryptable}`] : []),
  ].join('\n')
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { loadConfig } = await import('../platform/config.js')
  const { openOrm } = await import('../billing-api/database.js')
  const config = loadConfig(process.env, { kafkaBrokers: ['unused:9092'] })
  const orm = await openOrm(config.databaseUrl, 2)
  try {
    console.log(describeRotation(await rotateSecrets(orm, config)))
  } finally {
    await orm.close()
  }
}
