// The identity of this ClickHouse database (clickhouse/migrations/0005): the write path's
// Postgres records (fence, cuts, backfills) are kept per database.
import type { ClickHouse } from '../client.js'

export async function storeId(ch: ClickHouse): Promise<string> {
  const rows = await ch.query<{ id: string }>(`SELECT min(id) AS id FROM ${ch.table('write_path_store')}`)
  if (!rows[0]?.id) throw new Error(`${ch.table('write_path_store')} is empty; run the ClickHouse migrations`)
  return rows[0].id
}
