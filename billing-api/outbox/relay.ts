// Drains the system-events outbox to the Kafka topic system_events (spec: Events).
// Rows are claimed with FOR UPDATE SKIP LOCKED, produced with acks=all, then marked published
// in the same transaction: delivery is at least once (a crash between the produce and the
// commit re-sends), and consumers deduplicate on the event `id`. An event whose transaction
// rolled back never reached the outbox, so it is never sent. The same transaction creates the
// webhook deliveries of subscribed endpoints.
import type { MikroORM } from '@mikro-orm/postgresql'
import type { Producer } from 'kafkajs'
import { backgroundFailures } from '../../platform/metrics.js'
import { createDeliveries } from '../webhooks/index.js'
import { enqueueIntegrationSyncs } from '../integrations/index.js'
import type { IntegrationQueue } from '../queues.js'
import type { SystemEventMessage } from '../events/index.js'
export interface RelayOptions {
  batchSize?: number
  /** only this tenant's events (tests, operators); the running relay drains every tenant */
  tenantId?: string
  /** after commit: the webhook deliveries created for the relayed events */
  onDeliveries?: (deliveryIds: string[]) => Promise<void>
  /** provider syncs for customer.created / invoice.finalized, enqueued before the commit */
  integrations?: IntegrationQueue
}

/** Publishes up to `batchSize` pending events; returns how many were sent. */
export async function relaySystemEvents(orm: MikroORM, producer: Producer, topic: string, opts: RelayOptions = {}): Promise<number> {
  const { sent, deliveries } = await orm.em.fork().transactional(async (em) => {
    const conn = em.getConnection()
    const rows = (await conn.execute(
      `SELECT id, event_name, entity_type, entity_id, tenant_id, environment_id, payload, created_at
         FROM system_events_outbox WHERE published_at IS NULL AND (?::text IS NULL OR tenant_id = ?)
        ORDER BY created_at, id LIMIT ? FOR UPDATE SKIP LOCKED`,
      [opts.tenantId ?? null, opts.tenantId ?? null, opts.batchSize ?? 500],
      'all',
      em.getTransactionContext(),
    )) as (Omit<SystemEventMessage, 'timestamp'> & { created_at: Date | string })[]
    if (rows.length === 0) return { sent: 0, deliveries: [] as string[] }
    const messages: SystemEventMessage[] = rows.map((r) => ({
      id: r.id, event_name: r.event_name, entity_type: r.entity_type, entity_id: r.entity_id, tenant_id: r.tenant_id,
      environment_id: r.environment_id, timestamp: new Date(r.created_at).toISOString(), payload: r.payload,
    }))
    await producer.send({
      topic,
      acks: -1,
      // Keyed by entity: one entity's events stay in order on one partition.
      messages: messages.map((m) => ({ key: m.entity_id, value: JSON.stringify(m), headers: { event_name: m.event_name, tenant_id: m.tenant_id } })),
    })
    const deliveries = await createDeliveries(em, messages)
    if (opts.integrations) await enqueueIntegrationSyncs(em, messages, opts.integrations)
    await conn.execute(`UPDATE system_events_outbox SET published_at = now() WHERE id IN (?)`, [rows.map((r) => r.id)], 'run', em.getTransactionContext())
    return { sent: rows.length, deliveries }
  })
  // Deliveries are durable rows; if enqueueing fails they stay PENDING for the retry job.
  if (deliveries.length) await opts.onDeliveries?.(deliveries)
  return sent
}

/** Polls the outbox until stopped; drains in batches while there is a backlog. */
export function startOutboxRelay(
  orm: MikroORM, producer: Producer, topic: string, log: (msg: string, err: unknown) => void, opts: RelayOptions = {}, intervalMs = 250,
) {
  let stopped = false
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> = Promise.resolve()
  let failing = false
  const tick = async () => {
    try {
      while (!stopped && (await relaySystemEvents(orm, producer, topic, opts)) > 0) {
        // keep draining
      }
      if (failing) log('system event relay recovered', undefined)
      failing = false
    } catch (err) {
      // Every failed tick is counted; the log says it once per outage (ticks are 4 a second).
      backgroundFailures.inc({ operation: 'outbox_relay' })
      if (!failing) log('system event relay failed; retrying every tick until it succeeds', err)
      failing = true
    }
    if (!stopped) timer = setTimeout(() => { running = tick() }, intervalMs)
  }
  running = tick()
  return {
    async stop() {
      stopped = true
      clearTimeout(timer)
      await running
    },
  }
}
