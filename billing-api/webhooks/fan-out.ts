// Turns relayed system events into webhook deliveries, one per subscribed endpoint, inside
// the relay's transaction. The unique (endpoint_id, event_id) index makes a re-relayed event
// produce no second delivery.
import type { EntityManager } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import type { SystemEventMessage } from '../events/index.js'
export async function createDeliveries(em: EntityManager, events: SystemEventMessage[]): Promise<string[]> {
  if (events.length === 0) return []
  const conn = em.getConnection()
  // eslint-disable-next-line @typescript-eslint/no-unsafe-assignment -- MikroORM types the transaction context as any
  const ctx = em.getTransactionContext()
  const envs = [...new Set(events.map((e) => e.environment_id))]
  const endpoints = (await conn.execute(
    `SELECT id, tenant_id, environment_id, event_types FROM webhook_endpoints WHERE status = 'published' AND disabled_at IS NULL AND environment_id IN (?)`,
    [envs],
    'all',
    ctx,
  )) as { id: string; tenant_id: string; environment_id: string; event_types: string[] }[]
  const ids: string[] = []
  for (const e of events) {
    for (const ep of endpoints) {
      if (ep.tenant_id !== e.tenant_id || ep.environment_id !== e.environment_id) continue
      if (ep.event_types.length > 0 && !ep.event_types.includes(e.event_name)) continue
      const id = newId('whdel')
      const inserted = await conn.execute(
        `INSERT INTO webhook_deliveries (id, tenant_id, environment_id, endpoint_id, event_id, event_name, payload)
         VALUES (?, ?, ?, ?, ?, ?, ?::jsonb) ON CONFLICT (endpoint_id, event_id) DO NOTHING RETURNING id`,
        [id, e.tenant_id, e.environment_id, ep.id, e.id, e.event_name, JSON.stringify(e)],
        'all',
        ctx,
      )
      if (inserted.length) ids.push(id)
    }
  }
  return ids
}
