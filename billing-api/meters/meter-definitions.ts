// Read-only view of meter definitions for the aggregator, straight from Postgres.
import type { MikroORM } from '@mikro-orm/postgresql'
import type { MeterDefinition, MeterSource } from '../../schemas/meters.js'

export function postgresMeterSource(orm: MikroORM): MeterSource {
  const conn = orm.em.getConnection()
  return {
    async version() {
      const [row] = await conn.execute(`SELECT count(*)::text AS n, coalesce(max(updated_at), 'epoch')::text AS t FROM meters`)
      return `${row.n}/${row.t}`
    },
    async load() {
      return (await conn.execute(
        `SELECT id, tenant_id, environment_id, event_name, aggregation, filters FROM meters WHERE status = 'published'`,
      )) as MeterDefinition[]
    },
  }
}
