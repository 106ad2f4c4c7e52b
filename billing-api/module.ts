// A billing-api domain as one unit: its entities, its Postgres migrations and its routes.
// billing-api/modules.ts lists them; the ORM, the migrator and the HTTP app read that list.
import type { EntitySchema, MigrationObject } from '@mikro-orm/core'
import { Migration } from '@mikro-orm/migrations'
import type { FastifyInstance } from 'fastify'
import { readFileSync } from 'node:fs'
import type { BillingContext } from './context.js'

export interface DomainModule {
  name: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the schemas of every entity type
  entities: EntitySchema<any, any>[]
  /** in order; names must be globally unique (prefix them with the module name) */
  migrations: MigrationObject[]
  /** response schemas with an $id, added to the app before any route so every route can $ref them */
  schemas?: object[]
  /** registered under /v1 behind API-key auth, in their own encapsulated plugin */
  routes?: (app: FastifyInstance, ctx: BillingContext) => Promise<void>
}

/** A migration whose body is one SQL file beside the module's code. */
export function sqlMigration(name: string, file: URL): MigrationObject {
  const sql = readFileSync(file, 'utf8')
  class SqlMigration extends Migration {
    up(): void {
      this.addSql(sql)
    }
  }
  Object.defineProperty(SqlMigration, 'name', { value: name })
  return { name, class: SqlMigration }
}
