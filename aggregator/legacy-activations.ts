// The earlier write path kept meter activations in ClickHouse (meter_activations). At the
// first start of this version on a database, before any writer records a cut: a meter active
// there is live from the start in every shard, its backfill done; a backfill it left half done
// loses its (untagged) rows and runs again. Once per database (write_path_stores.legacy_imported).
import type pg from 'pg'
import type { ClickHouse } from '../clickhouse/client.js'
import { SHARDS } from '../schemas/shards.js'
import { transaction } from './pg-transaction.js'

export async function importLegacyActivations(ch: ClickHouse, pool: pg.Pool, store: string, log: (msg: string) => void): Promise<void> {
  await transaction(pool, async (c) => {
    const { rows } = await c.query<{ legacy_imported: boolean }>('SELECT legacy_imported FROM write_path_stores WHERE store = $1 FOR UPDATE', [store])
    if (!rows[0]?.legacy_imported) {
      const legacy = await ch.query<{ meter_id: string; us: string }>(
        `SELECT meter_id, toString(max(activated_us)) AS us FROM ${ch.table('meter_activations')} GROUP BY meter_id`,
      ).catch(() => [])
      const active = legacy.filter((r) => r.us !== '0').map((r) => r.meter_id)
      const started = legacy.filter((r) => r.us === '0').map((r) => r.meter_id)
      // A backfill the earlier path left half done: its rows are untagged and no writer of this
      // version counts the meter yet, so they can go whole.
      for (const id of started) {
        for (const table of ['meter_events', 'meter_buckets']) {
          await ch.command(`ALTER TABLE ${ch.table(table)} DELETE WHERE meter_id = {m:String}`, { m: id }, { mutations_sync: '2' })
        }
      }
      if (active.length) {
        await c.query(`INSERT INTO meter_backfills (store, meter_id, state) SELECT $2, unnest($1::text[]), 'done' ON CONFLICT (store, meter_id) DO UPDATE SET state = 'done'`, [active, store])
        await c.query(
          `INSERT INTO meter_cuts (store, meter_id, shard, epoch, seq)
           SELECT $2, m, s, 0, 0 FROM unnest($1::text[]) AS m, generate_series(0, ${SHARDS - 1}) AS s ON CONFLICT DO NOTHING`,
          [active, store],
        )
        log(`write path upgrade: ${active.length} meters active before it are live in every shard`)
      }
      await c.query('UPDATE write_path_stores SET legacy_imported = true WHERE store = $1', [store])
    }
  })
}
