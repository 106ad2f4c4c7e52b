// Read-only view of meter definitions for the aggregator, straight from Postgres.
import type { MikroORM } from '@mikro-orm/postgresql'
import type { MeterDefinition } from '../../aggregator/meter-rows.js'

export interface MeterSource {
  /** Cheap change detector: changes whenever a meter is created, changed or archived. */
  version(): Promise<string>
  load(): Promise<MeterDefinition[]>
}

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
