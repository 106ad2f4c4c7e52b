// `npm run tenant:create -- "Acme Inc." [development]`: creates a tenant with its production and
// development environments, a super_admin service account and a first API key (printed once).
// With the platform running it goes through the admin API; otherwise straight to Postgres
// (DATABASE_URL, or the local stack's PG_PORT).
import { openOrm } from '../billing-api/database.js'
import { createTenant } from '../billing-api/tenants/index.js'
import { loadConfig } from '../platform/config.js'
import { AdminApiError, AdminClient } from './admin/client.js'
import { adminTarget, platformState } from './admin/target.js'

const [name, keyEnvironmentArg] = process.argv.slice(2)
if (!name) {
  console.error('usage: create-tenant.ts <name> [production|development]')
  process.exit(2)
}
const keyEnvironment = keyEnvironmentArg === 'development' ? 'development' : 'production'
const target = adminTarget()
const running = await platformState(target).then((s) => s.running, (err: Error) => {
  console.error(err.message)
  process.exit(1)
})
if (running) {
  try {
    console.log(JSON.stringify(await new AdminClient(target).createTenant(name, keyEnvironment), null, 2))
  } catch (err) {
    if (!(err instanceof AdminApiError)) throw err
    console.error(`admin API: ${err.message}`)
    process.exitCode = 1
  }
} else {
  const config = loadConfig(process.env, { kafkaBrokers: ['unused:9092'] })
  const orm = await openOrm(config.databaseUrl, 2)
  try {
    const t = await createTenant(orm.em.fork(), { name, keyEnvironment }, config.apiKeyHashing)
    console.log(JSON.stringify({ tenant_id: t.tenantId, environments: t.environments, user_id: t.userId, api_key: t.apiKey }, null, 2))
  } finally {
    await orm.close()
  }
}
