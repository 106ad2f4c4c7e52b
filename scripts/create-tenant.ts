// Operator CLI: creates a tenant with its production and development environments, a
// super_admin service account and a first API key (printed once).
//   node --import tsx scripts/create-tenant.ts "Acme Inc." [development]
import { openOrm } from '../billing-api/database.js'
import { createTenant } from '../billing-api/tenants/index.js'
import { loadConfig } from '../platform/config.js'

const [name, keyEnvironment] = process.argv.slice(2)
if (!name) {
  console.error('usage: create-tenant.ts <name> [production|development]')
  process.exit(2)
}
const config = loadConfig(process.env, { kafkaBrokers: ['unused:9092'] })
const orm = await openOrm(config.databaseUrl, 2)
try {
  const t = await createTenant(orm.em.fork(), { name, keyEnvironment: keyEnvironment === 'development' ? 'development' : 'production' })
  console.log(JSON.stringify({ tenant_id: t.tenantId, environments: t.environments, user_id: t.userId, api_key: t.apiKey }, null, 2))
} finally {
  await orm.close()
}
