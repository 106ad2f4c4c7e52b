// Creates the demo tenant once and remembers its key in .data/demo.json (local use only:
// the database stores only the key's hash).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { MikroORM } from '@mikro-orm/postgresql'
import { candidateHashes, type ApiKeyHashing } from '../billing-api/auth/index.js'
import { ApiKeySchema } from '../billing-api/auth/api-key.entity.js'
import { createTenant, type CreatedTenant } from '../billing-api/tenants/index.js'
import { retryingFor } from '../platform/retry.js'

/** Waits (up to a few minutes) for a Postgres that is restarting, as the rest of the start-up does. */
export async function ensureDemoTenant(
  orm: MikroORM, dataDir: string, keyHashing: ApiKeyHashing, log: (msg: string) => void = (m) => console.error(m),
): Promise<CreatedTenant> {
  return retryingFor(() => findOrCreate(orm, dataDir, keyHashing), {
    forMs: 180_000,
    onRetry: (err, wait) => log(`the demo tenant step could not reach Postgres (${err instanceof Error ? err.message : String(err)}); trying again in ${wait} ms`),
  })
}

async function findOrCreate(orm: MikroORM, dataDir: string, keyHashing: ApiKeyHashing): Promise<CreatedTenant> {
  const file = join(dataDir, 'demo.json')
  if (existsSync(file)) {
    const saved = JSON.parse(readFileSync(file, 'utf8')) as CreatedTenant
    const key = await orm.em.fork().findOne(ApiKeySchema, { key_hash: { $in: candidateHashes(keyHashing, saved.apiKey).map((c) => c.hash) }, status: 'published' })
    if (key) return saved
  }
  const created = await createTenant(orm.em.fork(), {
    name: 'Demo Inc.',
    billing_details: { email: 'billing@demo.example', address: { address_line1: '1 Demo Street', address_city: 'Berlin', address_country: 'DE' } },
  }, keyHashing)
  // Written whole, then renamed: a reader that waits for the file (the fault tests, chaos) never sees it half-written.
  writeFileSync(`${file}.tmp`, JSON.stringify(created, null, 2), { mode: 0o600 })
  renameSync(`${file}.tmp`, file)
  return created
}
