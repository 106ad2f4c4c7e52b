// Runs the Postgres (MikroORM) migrations and the ClickHouse DDL, then exits.
//   node --import tsx scripts/migrate.ts [--postgres-only]
import { migratePostgres, openOrm } from '../billing-api/database.js'
import { ClickHouse } from '../clickhouse/client.js'
import { migrateClickHouse } from '../clickhouse/migrate.js'
import { applyRetention } from '../clickhouse/retention.js'
import { loadConfig } from '../platform/config.js'
import { describeRotation, rotateSecrets } from './rotate-secrets.js'

const postgresOnly = process.argv.includes('--postgres-only')
// Migrations need no broker; an unset KAFKA_BROKERS must not stop them.
const config = loadConfig(process.env, { kafkaBrokers: ['unused:9092'] })
// An operator's migration may build an index for minutes or wait for a lock behind traffic: no
// statement or lock deadline here (the services' PG_STATEMENT_TIMEOUT_MS is for requests and jobs).
const orm = await openOrm(config.databaseUrl, 2, { statementTimeoutMs: 0, lockTimeoutMs: 0 })
try {
  const pg = await migratePostgres(orm)
  console.log(`postgres: ${pg.length ? `applied ${pg.join(', ')}` : 'up to date'}`)
  // Secrets written before encryption at rest / the keyed API key hash are converted here.
  console.log(describeRotation(await rotateSecrets(orm, config)))
} finally {
  await orm.close()
}
if (!postgresOnly) {
  const ch = ClickHouse.open(config.clickhouse)
  try {
    const applied = await migrateClickHouse(ch)
    console.log(`clickhouse: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`)
    await applyRetention(ch, config.retention)
  } finally {
    await ch.close()
  }
}
