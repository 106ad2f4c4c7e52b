// The native delivery backend: a BullMQ queue with exponential-backoff retries. Any process
// may enqueue (the relay after fan-out, the API's manual retry); the scheduler process works it.
// Fairness between tenants and endpoints is the delivery gate's (delivery-gate.ts): the queue
// stays one FIFO, but a job whose endpoint or tenant is at its cap, or whose endpoint's circuit
// is open, leaves its worker slot at once instead of holding it.
import { Job, Queue, UnrecoverableError, Worker } from 'bullmq'
import type { Redis } from 'ioredis'
import { quietQueueErrors, withinCommandTimeout } from '../../platform/redis.js'
import type { MikroORM } from '@mikro-orm/postgresql'
import type { Clock } from '../../platform/clock.js'
import { webhookDeliveries } from '../../platform/metrics.js'
import type { WebhookConfig } from '../../platform/config.js'
import { markFailed, type DeliverySettings } from './deliver.js'
import type { WebhookQueue } from '../queues.js'
import { leaseMsFor } from './deferral.js'
import { DeliveryGate } from './delivery-gate.js'
import { processDelivery, type DeliveryJobData } from './process-delivery.js'

export const WEBHOOK_QUEUE = 'webhook-delivery'

/** The webhook settings, the SSRF policy and the keys that open signing secrets. */
export type WebhookDeliverySettings = WebhookConfig & Pick<DeliverySettings, 'outbound' | 'keys'>

export function createWebhookQueue(redis: Redis, prefix: string, settings: Pick<WebhookDeliverySettings, 'attempts' | 'backoffMs'>): WebhookQueue {
  const queue = new Queue(WEBHOOK_QUEUE, { connection: redis, prefix })
  quietQueueErrors(queue)
  return {
    async enqueue(ids) {
      if (ids.length === 0) return
      await withinCommandTimeout(redis, queue.addBulk(
        ids.map((id) => ({
          name: 'deliver',
          data: { delivery_id: id },
          opts: { attempts: settings.attempts, backoff: { type: 'exponential', delay: settings.backoffMs }, removeOnComplete: 1000, removeOnFail: 5000 },
        })),
      ))
    },
    close: () => queue.close(),
  }
}

export function startWebhookWorker(orm: MikroORM, redis: Redis, prefix: string, clock: Clock, settings: WebhookDeliverySettings) {
  const connection = redis.duplicate()
  // Wakes parked jobs (delivery-gate.ts); a job no longer delayed (already woken, done) is skipped.
  const queue = new Queue<DeliveryJobData>(WEBHOOK_QUEUE, { connection: redis, prefix })
  quietQueueErrors(queue)
  const wake = async (jobIds: string[]) => {
    for (const id of jobIds) await (await Job.fromId<DeliveryJobData>(queue, id))?.promote().catch(() => undefined)
  }
  const leaseMs = leaseMsFor(settings.timeoutMs)
  const gate = new DeliveryGate(redis, prefix, {
    endpointConcurrency: settings.endpointConcurrency, tenantConcurrency: settings.tenantConcurrency, leaseMs,
    circuitFailures: settings.circuitFailures, circuitCooldownMs: settings.circuitCooldownMs,
  })
  const deps = { orm, clock, gate, timeoutMs: settings.timeoutMs, outbound: settings.outbound, keys: settings.keys, leaseMs, wake }
  const worker = new Worker<DeliveryJobData>(WEBHOOK_QUEUE, async (job, token) => processDelivery(deps, job, token), {
    connection, prefix, concurrency: settings.workerConcurrency,
  })
  worker.on('failed', (job, err) => {
    if (!job) return
    // UnrecoverableError: the SSRF guard refused the URL; attemptDelivery already marked it FAILED.
    const exhausted = job.attemptsMade >= (job.opts.attempts ?? 1) || err instanceof UnrecoverableError
    webhookDeliveries.inc({ outcome: exhausted ? 'failed' : 'retried' })
    if (exhausted) void markFailed(orm, job.data.delivery_id)
  })
  return {
    async stop() {
      await worker.close()
      await queue.close()
      await connection.quit()
    },
  }
}
