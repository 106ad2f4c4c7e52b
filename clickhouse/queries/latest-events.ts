// The latest counted events of one environment, newest acknowledgement first: what a developer
// checks after wiring ingestion (GET /v1/events, the console's events view). A crash replay may
// have written a raw row twice before it merged; LIMIT 1 BY keeps one.
import type { ClickHouse } from '../client.js'
import type { RawEventRow } from './events.js'

export interface LatestEventsQuery {
  tenantId: string
  environmentId: string
  eventName?: string
  externalCustomerId?: string
  /** one event by the id it was sent with */
  eventId?: string
  limit: number
  offset: number
}

function where(q: LatestEventsQuery): string {
  const parts = ['tenant_id = {tenant:String}', 'environment_id = {env:String}']
  if (q.eventName !== undefined) parts.push('event_name = {name:String}')
  if (q.externalCustomerId !== undefined) parts.push('external_customer_id = {customer:String}')
  if (q.eventId !== undefined) parts.push('event_id = {eventId:String}')
  return parts.join(' AND ')
}

const params = (q: LatestEventsQuery) => ({
  tenant: q.tenantId, env: q.environmentId, name: q.eventName ?? '', customer: q.externalCustomerId ?? '', eventId: q.eventId ?? '', limit: q.limit, offset: q.offset,
})

export async function latestEvents(ch: ClickHouse, q: LatestEventsQuery): Promise<{ rows: RawEventRow[]; total: number }> {
  const [rows, [count]] = await Promise.all([
    ch.query<RawEventRow>(
      `SELECT event_id, event_name, external_customer_id, customer_id, toString(toUnixTimestamp64Milli(timestamp)) AS timestamp_ms,
              toString(source) AS source, properties, toString(toUnixTimestamp64Milli(ingested_at)) AS ingested_at_ms
         FROM ${ch.table('events_raw')}
        WHERE ${where(q)}
        ORDER BY ingested_at DESC, event_id DESC
        LIMIT 1 BY event_id, timestamp
        LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
      params(q),
    ),
    ch.query<{ total: string }>(`SELECT toString(uniqExact(event_id, timestamp)) AS total FROM ${ch.table('events_raw')} WHERE ${where(q)}`, params(q)),
  ])
  return { rows, total: Number(count?.total ?? 0) }
}
