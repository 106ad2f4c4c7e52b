// Data lifecycle: the TTLs of the tables that grow with every event, from the configuration
// (RETENTION_EVENTS_RAW_DAYS, RETENTION_METER_EVENTS_DAYS, and the dedup horizon derived from
// INGEST_MAX_EVENT_AGE_DAYS). Applied at start-up after the migrations; 0 removes a TTL (kept
// forever). Existing parts are not rewritten at once: expired rows go at the next merges.
import type { ClickHouse } from './client.js'

export interface Retention {
  eventsRawDays: number
  meterEventsDays: number
  /** days of event time a dedup key is kept; 0: forever */
  dedupHorizonDays: number
}

const TABLES = [
  { table: 'events_raw', ttl: (days: number) => `toDateTime(timestamp) + toIntervalDay(${days})`, days: (r: Retention) => r.eventsRawDays },
  { table: 'meter_events', ttl: (days: number) => `toDateTime(timestamp) + toIntervalDay(${days})`, days: (r: Retention) => r.meterEventsDays },
  { table: 'dedup_events', ttl: (days: number) => `toDateTime(intDiv(ms, 1000)) + toIntervalDay(${days})`, days: (r: Retention) => r.dedupHorizonDays },
]

export async function applyRetention(ch: ClickHouse, r: Retention): Promise<void> {
  for (const t of TABLES) {
    const days = Math.floor(t.days(r))
    const current = await ch.query<{ q: string }>(`SELECT create_table_query AS q FROM system.tables WHERE database = {db:String} AND name = {t:String}`, { db: ch.database, t: t.table })
    const has = /\bTTL\b/.test(current[0]?.q ?? '')
    if (days > 0) {
      await ch.command(`ALTER TABLE ${ch.table(t.table)} MODIFY TTL ${t.ttl(days)}`, undefined, { materialize_ttl_after_modify: '0' })
    } else if (has) {
      await ch.command(`ALTER TABLE ${ch.table(t.table)} REMOVE TTL`)
    }
  }
}
