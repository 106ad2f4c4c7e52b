// POST /webhooks/<provider>/{tenant_id}/{env_id}: verify, record, apply, in that order.
// 1. The environment's active connection to the provider gives the webhook secret (none: 404).
// 2. The signature is verified over the raw body (bad or missing: 401, nothing changed).
// 3. One transaction inserts the provider event id into integration_webhook_events (unique)
//    and applies the event. A redelivery finds the row and changes nothing (200, duplicate);
//    a concurrent duplicate waits on the unique index and then finds it. A handler failure
//    rolls back the row too and answers 500, so the provider retries.
import { DomainError, NotFoundError, PermissionDeniedError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import { backgroundFailures } from '../../platform/metrics.js'
import { retrying } from '../../platform/retry.js'
import type { BillingContext } from '../context.js'
import { findOpenConnection } from './connections.js'
import { applyInboundEvent } from './inbound-events.js'
import { providerFor } from './providers.js'
import { WebhookSignatureError } from './provider.js'
import type { IntegrationSyncJob } from '../queues.js'

export class InboundHandlerError extends DomainError {
  constructor(message: string) {
    super('internal_error', 500, message)
  }
}

export interface InboundResult {
  event_id: string
  event_type: string
  duplicate: boolean
  outcome: string
}

export async function receiveProviderWebhook(
  ctx: BillingContext, providerType: string, tenantId: string, environmentId: string, rawBody: Buffer, headers: Record<string, string | string[] | undefined>,
  log: { error(obj: object, msg: string): void } = { error: (obj, msg) => console.error(msg, obj) },
): Promise<InboundResult> {
  const scope = { tenant_id: tenantId, environment_id: environmentId }
  const em = ctx.orm.em.fork()
  const provider = providerFor(ctx.config, providerType)
  const conn = await findOpenConnection(ctx.config, em, scope, provider.type)
  if (!conn) throw new NotFoundError(`${provider.type} connection for tenant ${tenantId} and environment ${environmentId}`)
  let event
  try {
    event = provider.parseWebhook(conn, rawBody, headers, ctx.clock.now())
  } catch (err) {
    if (err instanceof WebhookSignatureError) throw new PermissionDeniedError(err.message, 401)
    throw err
  }
  const resync: IntegrationSyncJob[] = []
  const result = await em.transactional(async (tx) => {
    const c = tx.getConnection()
    const inserted = await c.execute(
      `INSERT INTO integration_webhook_events (id, tenant_id, environment_id, provider, provider_event_id, event_type, outcome)
       VALUES (?, ?, ?, ?, ?, ?, 'processing') ON CONFLICT (tenant_id, environment_id, provider, provider_event_id) DO NOTHING RETURNING id`,
      [newId('inevt'), tenantId, environmentId, provider.type, event.id, event.type], 'all', tx.getTransactionContext(),
    )
    if (inserted.length === 0) return { event_id: event.id, event_type: event.type, duplicate: true, outcome: 'duplicate: already processed' }
    let outcome: string
    try {
      outcome = await applyInboundEvent({ ctx, tx, scope, provider: provider.type, event, resync })
    } catch (err) {
      throw new InboundHandlerError(`${provider.type} event ${event.id} (${event.type}) failed: ${(err as Error).message}`)
    }
    await c.execute(`UPDATE integration_webhook_events SET outcome = ? WHERE id = ?`, [outcome, inserted[0].id], 'run', tx.getTransactionContext())
    return { event_id: event.id, event_type: event.type, duplicate: false, outcome }
  })
  // The resyncs come after the commit: the event itself is applied and recorded, so a failed
  // enqueue must not fail the webhook (the provider would redeliver an event we already hold).
  // It is retried briefly (jobs are idempotent by id), then logged with its context and counted.
  if (resync.length && ctx.integrations) {
    const queue = ctx.integrations
    try {
      await retrying(() => queue.enqueue(resync))
    } catch (err) {
      backgroundFailures.inc({ operation: 'integration_resync_enqueue' })
      log.error(
        { err, tenant_id: tenantId, environment_id: environmentId, provider: provider.type, provider_event_id: event.id, jobs: resync.map((j) => `${j.entity_type}/${j.entity_id}`) },
        'inbound webhook applied, but enqueueing its provider resyncs failed; resync these entities with POST /v1/integrations/sync',
      )
    }
  }
  return result
}
