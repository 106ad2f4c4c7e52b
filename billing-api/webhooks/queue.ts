// The native delivery backend: a BullMQ queue with exponential-backoff retries. Any process
// may enqueue (the relay after fan-out, the API's manual retry); the scheduler process works it.
import { Queue, Worker } from 'bullmq'
import type { Redis } from 'ioredis'
import { quietQueueErrors, withinCommandTimeout } from '../../platform/redis.js'
import type { MikroORM } from '@mikro-orm/postgresql'
import type { Clock } from '../../platform/clock.js'
import { attemptDelivery, markFailed, type DeliverySettings } from './deliver.js'
import type { WebhookQueue } from '../queues.js'

export const WEBHOOK_QUEUE = 'webhook-delivery'

export interface WebhookDeliverySettings extends DeliverySettings {
  attempts: number
  backoffMs: number
}

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
  const worker = new Worker<{ delivery_id: string }>(
    WEBHOOK_QUEUE,
    async (job) => attemptDelivery(orm, job.data.delivery_id, clock, settings),
    { connection, prefix, concurrency: 10 },
  )
  worker.on('failed', (job) => {
    if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) void markFailed(orm, job.data.delivery_id)
  })
  return {
    async stop() {
      await worker.close()
      await connection.quit()
    },
  }
}
