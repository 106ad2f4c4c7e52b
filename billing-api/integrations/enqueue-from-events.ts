// Called by the outbox relay inside its transaction (events/relay.ts): customer.created and
// invoice.finalized become one push job per active connection of the event's environment.
// Environments without a connection enqueue nothing. The relay commits only after the jobs
// are in Redis, and a re-relayed event gets the same job id, so syncs are at least once and
// the push itself is idempotent (sync.ts).
import type { EntityManager } from '@mikro-orm/postgresql'
import type { SystemEventMessage } from '../events/index.js'
import type { ConnectionSettings } from './entities.js'
import type { MappedEntityType } from '../queues.js'
import type { IntegrationQueue, IntegrationSyncJob } from '../queues.js'

export const SYNC_TRIGGERS: Record<string, MappedEntityType> = { 'customer.created': 'customer', 'invoice.finalized': 'invoice' }

export async function enqueueIntegrationSyncs(em: EntityManager, events: SystemEventMessage[], queue: IntegrationQueue): Promise<number> {
  const relevant = events.filter((e) => SYNC_TRIGGERS[e.event_name])
  if (relevant.length === 0) return 0
  const connections = (await em.getConnection().execute(
    `SELECT tenant_id, environment_id, provider, settings FROM integration_connections WHERE status = 'published' AND environment_id IN (?)`,
    [[...new Set(relevant.map((e) => e.environment_id))]],
    'all',
    em.getTransactionContext(),
  )) as { tenant_id: string; environment_id: string; provider: string; settings: ConnectionSettings }[]
  const jobs: IntegrationSyncJob[] = []
  for (const e of relevant) {
    for (const c of connections) {
      if (c.tenant_id !== e.tenant_id || c.environment_id !== e.environment_id) continue
      jobs.push({
        tenant_id: e.tenant_id, environment_id: e.environment_id, provider: c.provider, entity_type: SYNC_TRIGGERS[e.event_name], entity_id: e.entity_id,
        cause: e.id, rate_limit_per_second: c.settings?.integration_events?.rate_limit_per_second,
      })
    }
  }
  await queue.enqueue(jobs)
  return jobs.length
}
