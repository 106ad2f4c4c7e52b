// Applies clickhouse/migrations/*.sql in file-name order, once each, recording them in
// {db}.schema_migrations. `{db}` in a file is replaced with the configured database.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chDateTime, type ClickHouse } from './client.js'

const MIGRATIONS_DIR = fileURLToPath(new URL('./migrations', import.meta.url))

export function splitStatements(sql: string): string[] {
  return sql
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n')
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter(Boolean)
}

/** `until`: apply only the files up to this one (tests of an upgrade from an earlier layout). */
export async function migrateClickHouse(ch: ClickHouse, until?: string): Promise<string[]> {
  await ch.command(`CREATE DATABASE IF NOT EXISTS ${ch.database}`)
  await ch.command(
    `CREATE TABLE IF NOT EXISTS ${ch.table('schema_migrations')} (version String, applied_at DateTime64(3, 'UTC') DEFAULT now64(3)) ENGINE = ReplacingMergeTree ORDER BY version`,
  )
  const applied = new Set(
    (await ch.query<{ version: string }>(`SELECT version FROM ${ch.table('schema_migrations')} FINAL`)).map((r) => r.version),
  )
  const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql') && (!until || f <= until)).sort()
  const ran: string[] = []
  for (const file of files) {
    if (applied.has(file)) continue
    const sql = readFileSync(join(MIGRATIONS_DIR, file), 'utf8').replaceAll('{db}', ch.database)
    for (const statement of splitStatements(sql)) await ch.command(statement)
    await ch.insertCompact('schema_migrations', [[file, chDateTime(Date.now())]])
    ran.push(file)
  }
  return ran
}
