// Whether any raw event with a meter's event name exists in its tenant and environment: a meter
// whose events exist may not change how it counts them (billing-api/meters/update-meter.ts).
import type { ClickHouse } from '../client.js'

export async function eventsExist(ch: ClickHouse, q: { tenantId: string; environmentId: string; eventName: string }): Promise<boolean> {
  const rows = await ch.query<{ one: number }>(
    `SELECT 1 AS one FROM ${ch.table('events_raw')}
     WHERE tenant_id = {tenant:String} AND environment_id = {env:String} AND event_name = {name:String} LIMIT 1`,
    { tenant: q.tenantId, env: q.environmentId, name: q.eventName },
  )
  return rows.length > 0
}
