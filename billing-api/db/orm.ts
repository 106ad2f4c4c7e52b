// The one module that owns the Postgres connection (MikroORM). Entities and migrations
// come from the domain modules (billing-api/modules.ts).
import { MikroORM, defineConfig } from '@mikro-orm/postgresql'
import { Migrator } from '@mikro-orm/migrations'
import { modules } from '../modules.js'
import { foundationMigrations } from './migrations.js'

export const entities = modules.flatMap((m) => m.entities)
export const migrations = [...foundationMigrations, ...modules.flatMap((m) => m.migrations)]

export type Orm = MikroORM

export async function openOrm(databaseUrl: string, poolMax = 10): Promise<MikroORM> {
  return MikroORM.init(
    defineConfig({
      clientUrl: databaseUrl,
      entities,
      discovery: { warnWhenNoEntities: false },
      extensions: [Migrator],
      migrations: { migrationsList: migrations, transactional: true, allOrNothing: true, tableName: 'mikro_orm_migrations', silent: true },
      pool: { min: 0, max: poolMax },
      allowGlobalContext: false,
      forceUtcTimezone: true,
      debug: false,
    }),
  )
}

/** Applies pending migrations; an advisory lock keeps concurrent starters from racing. */
export async function migratePostgres(orm: MikroORM): Promise<string[]> {
  const knex = orm.em.getConnection().getKnex()
  return knex.transaction(async (trx) => {
    // Transaction-scoped lock: released at commit, held while the migrator runs.
    await trx.raw('SELECT pg_advisory_xact_lock(8134001)')
    const applied = await orm.getMigrator().up()
    return applied.map((m) => m.name)
  })
}
