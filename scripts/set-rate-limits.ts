// Operator command: a tenant's own request rate limits (billing API and ingest, requests per
// RATE_LIMIT_WINDOW_SECONDS), overriding RATE_LIMIT_PER_KEY / RATE_LIMIT_PER_TENANT.
//   node --import tsx scripts/set-rate-limits.ts <tenant_id> [--per-key N|default] [--per-tenant N|default]
// N = 0 means no limit; `default` returns to the configured value. Running processes see the
// change within API_KEY_CACHE_TTL_MS.
import { openOrm } from '../billing-api/database.js'
import { loadConfig } from '../platform/config.js'

function value(flag: string): number | null | undefined {
  const i = process.argv.indexOf(flag)
  if (i < 0) return undefined
  const raw = process.argv[i + 1]
  if (raw === 'default') return null
  if (!raw || !/^\d+$/.test(raw)) throw new Error(`${flag} takes a non-negative integer or "default"`)
  return Number(raw)
}

const tenantId = process.argv[2]
const perKey = value('--per-key')
const perTenant = value('--per-tenant')
if (!tenantId || tenantId.startsWith('--') || (perKey === undefined && perTenant === undefined)) {
  console.error('usage: set-rate-limits.ts <tenant_id> [--per-key N|default] [--per-tenant N|default]')
  process.exit(2)
}
const config = loadConfig(process.env, { kafkaBrokers: ['unused:9092'] })
const orm = await openOrm(config.databaseUrl, 2)
try {
  const conn = orm.em.getConnection()
  const sets = [...(perKey !== undefined ? ['rate_limit_per_key = ?'] : []), ...(perTenant !== undefined ? ['rate_limit_per_tenant = ?'] : [])]
  const params = [...(perKey !== undefined ? [perKey] : []), ...(perTenant !== undefined ? [perTenant] : [])]
  const rows = (await conn.execute(
    `UPDATE tenants SET ${sets.join(', ')}, updated_at = now() WHERE id = ? RETURNING id, rate_limit_per_key, rate_limit_per_tenant`,
    [...params, tenantId],
  )) as { id: string; rate_limit_per_key: number | null; rate_limit_per_tenant: number | null }[]
  if (!rows[0]) {
    console.error(`tenant ${tenantId} not found`)
    process.exitCode = 1
  } else {
    const show = (v: number | null, d: number) => (v === null ? `default (${d || 'no limit'})` : v === 0 ? 'no limit' : String(v))
    console.log(`tenant ${tenantId}: per key ${show(rows[0].rate_limit_per_key, config.requestRateLimit.perKey)}, per tenant ${show(rows[0].rate_limit_per_tenant, config.requestRateLimit.perTenant)} requests per ${config.requestRateLimit.windowSeconds} s`)
  }
} finally {
  await orm.close()
}
