// The one module that owns the Postgres connection (MikroORM). Entities and migrations
// come from the domain modules (billing-api/modules.ts).
import { MikroORM, defineConfig } from '@mikro-orm/postgresql'
import { Migrator } from '@mikro-orm/migrations'
import { modules } from './modules.js'
import { sqlMigration } from './module.js'
import { AfterCommitSubscriber } from './db/after-commit.js'
import type pg from 'pg'
import { DEFAULT_POSTGRES_DEADLINES, sessionDeadlines, type PostgresDeadlines, type PostgresWatchdog } from '../platform/postgres-watchdog.js'

export const entities = modules.flatMap((m) => m.entities)
/** The foundation schema first; then each domain's own migrations, in module order. */
const foundationMigrations = [
  sqlMigration('0001_foundation', new URL('./db/migrations/0001_foundation.sql', import.meta.url)),
  // The aggregator's fence, meter cuts and backfill leases (it has no ORM entities of its own).
  sqlMigration('0002_write_path', new URL('../aggregator/postgres/0001_write_path.sql', import.meta.url)),
]
export const migrations = [...foundationMigrations, ...modules.flatMap((m) => m.migrations)]

/**
 * With Postgres down, a request must fail within about 2 s (503, platform/unavailable.ts), not
 * wait knex's default 60 s for a connection: connect attempts and pool waits have deadlines,
 * every statement has server-side ones, and a watchdog (platform/postgres-watchdog.ts) closes
 * connections whose queries a hung Postgres does not answer.
 */
export async function openOrm(
  databaseUrl: string, poolMax = 10, deadlines: Partial<PostgresDeadlines> = {}, watchdog?: PostgresWatchdog,
  /** false: no connection (and no check) until the first statement, so a Postgres down at start fails statements, not the start */
  connect = true,
): Promise<MikroORM> {
  const d = { ...DEFAULT_POSTGRES_DEADLINES, ...deadlines }
  const orm = await MikroORM.init(
    defineConfig({
      connect,
      clientUrl: databaseUrl,
      entities,
      discovery: { warnWhenNoEntities: false },
      extensions: [Migrator],
      migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, tableName: 'mikro_orm_migrations', silent: true },
      pool: {
        min: 0, max: poolMax, acquireTimeoutMillis: d.acquireTimeoutMs,
        afterCreate: (conn: pg.Client, done: (err: Error | null, conn: pg.Client) => void) => {
          watchdog?.guard(conn)
          done(null, conn)
        },
      },
      driverOptions: { connection: sessionDeadlines(d) },
      allowGlobalContext: false,
      forceUtcTimezone: true,
      subscribers: [new AfterCommitSubscriber()],
      debug: false,
    }),
  )
  if (watchdog) {
    // knex's pool opens connections through this method: while the watchdog holds Postgres for
    // hung, opening one fails at once (503) instead of waiting out the connect timeout.
    const client = orm.em.getConnection().getKnex().client as { acquireRawConnection(): Promise<unknown> }
    const open = client.acquireRawConnection.bind(client)
    client.acquireRawConnection = async () => {
      watchdog.assertAnswering()
      return open()
    }
  }
  return orm
}

/** Applies pending migrations; an advisory lock keeps concurrent starters from racing. */
export async function migratePostgres(orm: MikroORM): Promise<string[]> {
  const knex = orm.em.getConnection().getKnex()
  return knex.transaction(async (trx) => {
    // Transaction-scoped lock: released at commit, held while the migrator runs. Another
    // starter's migrations may take longer than the statement deadlines: wait for them.
    await trx.raw('SET LOCAL lock_timeout = 0; SET LOCAL statement_timeout = 0')
    await trx.raw('SELECT pg_advisory_xact_lock(8134001)')
    const applied = await orm.getMigrator().up()
    return applied.map((m) => m.name)
  })
}
