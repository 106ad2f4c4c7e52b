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

/** Where a page of raw events ends: the (event_id, timestamp) of its last row, the table's order. */
export interface RawCursor {
  eventId: string
  timestampMs: string
}

export const RAW_START: RawCursor = { eventId: '', timestampMs: '-1' }

export function cursorAfter(row: RawEventRow): RawCursor {
  return { eventId: row.event_id, timestampMs: row.timestamp_ms }
}

/**
 * Pages through one event name's raw events in (event_id, timestamp) order, an event's identity.
 * A crash replay can write a raw row twice before it merges; FINAL keeps one (a background job,
 * not a billing read).
 */
export async function rawEventsPage(
  ch: ClickHouse,
  scope: { tenantId: string; environmentId: string; eventName: string },
  after: RawCursor,
  limit: number,
): Promise<RawEventRow[]> {
  return ch.query<RawEventRow>(
    `SELECT event_id, event_name, external_customer_id, customer_id, toString(toUnixTimestamp64Milli(timestamp)) AS timestamp_ms,
            source, properties, toString(toUnixTimestamp64Milli(ingested_at)) AS ingested_at_ms
       FROM ${ch.table('events_raw')} FINAL
      WHERE tenant_id = {tenant:String} AND environment_id = {env:String} AND event_name = {name:String}
        AND (event_id, toUnixTimestamp64Milli(timestamp)) > ({after:String}, {afterMs:Int64})
      ORDER BY event_id, timestamp
      LIMIT {limit:UInt32}`,
    { tenant: scope.tenantId, env: scope.environmentId, name: scope.eventName, after: after.eventId, afterMs: after.timestampMs, limit },
  )
}

/** A ClickHouse string literal: backslash and quote escaped (values stay out of the SQL's syntax). */
export function stringLiteral(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}

/** Which of these (tenant, environment, event name) scopes have any raw event. */
export async function scopesWithEvents(
  ch: ClickHouse, scopes: { tenantId: string; environmentId: string; eventName: string }[],
): Promise<Set<string>> {
  const out = new Set<string>()
  for (let i = 0; i < scopes.length; i += 1000) {
    const chunk = scopes.slice(i, i + 1000)
    const tuples = chunk.map((s) => `(${stringLiteral(s.tenantId)}, ${stringLiteral(s.environmentId)}, ${stringLiteral(s.eventName)})`).join(', ')
    const rows = await ch.query<{ t: string; e: string; n: string }>(
      `SELECT DISTINCT tenant_id AS t, environment_id AS e, event_name AS n FROM ${ch.table('events_raw')}
        WHERE (tenant_id, environment_id, event_name) IN (${tuples})`,
    )
    for (const r of rows) out.add(`${r.t}\u0000${r.e}\u0000${r.n}`)
  }
  return out
}
