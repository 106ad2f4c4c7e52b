// Postgres migrations, in order. Each domain keeps its SQL beside its code; this list
// is the single place that orders them.
import { Migration } from '@mikro-orm/migrations'
import type { MigrationObject } from '@mikro-orm/core'
import { readFileSync } from 'node:fs'

function sqlMigration(name: string, file: URL): MigrationObject {
  const sql = readFileSync(file, 'utf8')
  class SqlMigration extends Migration {
    up(): void {
      this.addSql(sql)
    }
  }
  Object.defineProperty(SqlMigration, 'name', { value: name })
  return { name, class: SqlMigration }
}

export const migrations: MigrationObject[] = [
  sqlMigration('0001_foundation', new URL('./migrations/0001_foundation.sql', import.meta.url)),
]
