// SQL over the raw events table, used to backfill a meter created after its events arrived.
import type { ClickHouse } from '../client.js'

export interface RawEventRow {
  event_id: string
  event_name: string
  external_customer_id: string
  customer_id: string
  timestamp_ms: string
  source: string
  properties: string
  ingested_at_ms: string
}

/**
 * Pages through one event name's raw events in event_id order. A crash replay can write a raw
 * row twice before it merges; FINAL keeps one (a background job, not a billing read).
 */
export async function rawEventsPage(
  ch: ClickHouse,
  scope: { tenantId: string; environmentId: string; eventName: string },
  afterEventId: string,
  limit: number,
): Promise<RawEventRow[]> {
  return ch.query<RawEventRow>(
    `SELECT event_id, event_name, external_customer_id, customer_id, toString(toUnixTimestamp64Milli(timestamp)) AS timestamp_ms,
            source, properties, toString(toUnixTimestamp64Milli(ingested_at)) AS ingested_at_ms
       FROM ${ch.table('events_raw')} FINAL
      WHERE tenant_id = {tenant:String} AND environment_id = {env:String} AND event_name = {name:String}
        AND event_id > {after:String}
      ORDER BY event_id
      LIMIT {limit:UInt32}`,
    { tenant: scope.tenantId, env: scope.environmentId, name: scope.eventName, after: afterEventId, limit },
  )
}
