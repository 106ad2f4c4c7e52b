// A page of the meter rows (one per matched raw event) of one meter, some customers and a period,
// in (timestamp, event_id) order, after a keyset cursor. The explain trail of an invoice line
// (billing-api/billing/explain-line.ts) shows them as the raw events behind its quantity.
// A crash replay may have written a row twice before it merged; LIMIT 1 BY keeps one.
import { chDateTime, type ClickHouse } from '../client.js'

export interface MeterEventsPageQuery {
  tenantId: string
  environmentId: string
  meterId: string
  externalCustomerIds: string[]
  start: Date
  end: Date
  /** the last row of the previous page */
  after?: { timestampMs: number; eventId: string }
  limit: number
}

export interface MeterEventRow {
  event_id: string
  external_customer_id: string
  timestamp_ms: string
  value: string
  value_text: string
  source: string
}

export async function meterEventsPage(ch: ClickHouse, q: MeterEventsPageQuery): Promise<MeterEventRow[]> {
  const params: Record<string, unknown> = {
    tenant: q.tenantId, env: q.environmentId, meter: q.meterId, customers: q.externalCustomerIds,
    start: chDateTime(q.start.getTime()), end: chDateTime(q.end.getTime()), limit: q.limit,
  }
  const where = [
    'tenant_id = {tenant:String}', 'environment_id = {env:String}', 'meter_id = {meter:String}',
    'has({customers:Array(String)}, external_customer_id)',
    "timestamp >= {start:DateTime64(3, 'UTC')}", "timestamp < {end:DateTime64(3, 'UTC')}",
  ]
  if (q.after) {
    params.after_ts = chDateTime(q.after.timestampMs)
    params.after_id = q.after.eventId
    where.push("(timestamp, event_id) > ({after_ts:DateTime64(3, 'UTC')}, {after_id:String})")
  }
  return ch.query<MeterEventRow>(
    `SELECT event_id, external_customer_id, toString(toUnixTimestamp64Milli(timestamp)) AS timestamp_ms,
            toString(value) AS value, value_text, toString(source) AS source
       FROM ${ch.table('meter_events')}
      WHERE ${where.join(' AND ')}
      ORDER BY timestamp, event_id
      LIMIT 1 BY event_id, timestamp
      LIMIT {limit:UInt32}`,
    params,
  )
}
