// Background provider syncs: a BullMQ queue any process may enqueue into (the outbox relay
// for customer.created / invoice.finalized, the inbound webhook for resyncs) and a worker in
// the scheduler process. Before a job runs it takes a token from its tenant's bucket
// (rate-limit.ts); without one it is moved back to delayed, which costs no attempt.
// Domain errors (the invoice is not FINALIZED, the connection was deleted) do not retry;
// provider failures retry with exponential backoff.
import { DelayedError, Queue, UnrecoverableError, Worker, type Job } from 'bullmq'
import type { Redis } from 'ioredis'
import { quietQueueErrors, withinCommandTimeout } from '../../platform/redis.js'
import { DomainError, ServiceUnavailableError } from '../../platform/errors.js'
import type { BillingContext } from '../context.js'
import type { IntegrationQueue, IntegrationSyncJob } from '../queues.js'
import { TenantRateLimiter } from './rate-limit.js'
import { syncEntity } from './sync.js'
import { queueJobFailures } from '../../platform/business-metrics.js'

export const INTEGRATION_QUEUE = 'integration-sync'

// BullMQ job ids may not contain ':'.
const jobId = (j: IntegrationSyncJob) => [j.cause, j.provider, j.entity_type, j.entity_id].join('__').replaceAll(':', '_')

export function createIntegrationQueue(redis: Redis, prefix: string): IntegrationQueue {
  const queue = new Queue(INTEGRATION_QUEUE, { connection: redis, prefix })
  quietQueueErrors(queue)
  return {
    async enqueue(jobs) {
      if (jobs.length === 0) return
      await withinCommandTimeout(redis, queue.addBulk(jobs.map((data) => ({
        name: `push-${data.entity_type}`,
        data,
        opts: { jobId: jobId(data), attempts: 6, backoff: { type: 'exponential', delay: 2_000 }, removeOnComplete: 1000, removeOnFail: 5000 },
      }))))
    },
    close: () => queue.close(),
  }
}

export function startIntegrationWorker(ctx: BillingContext, redis: Redis, prefix: string, opts: { concurrency?: number } = {}) {
  const connection = redis.duplicate()
  const limiter = new TenantRateLimiter(redis, prefix)
  const worker = new Worker(
    INTEGRATION_QUEUE,
    async (job: Job<IntegrationSyncJob>, token?: string) => {
      const d = job.data
      const wait = await limiter.take(d.tenant_id, d.rate_limit_per_second ?? ctx.config.integrations.rateLimitPerSecond)
      if (wait > 0) {
        await job.moveToDelayed(Date.now() + wait, token)
        throw new DelayedError()
      }
      try {
        return await syncEntity(ctx, { tenant_id: d.tenant_id, environment_id: d.environment_id }, { entity_type: d.entity_type, entity_id: d.entity_id, provider: d.provider, method: 'push' })
      } catch (err) {
        if (err instanceof DomainError && !(err instanceof ServiceUnavailableError)) throw new UnrecoverableError(err.message)
        throw err
      }
    },
    { connection, prefix, concurrency: opts.concurrency ?? 5 },
  )
  worker.on('failed', () => queueJobFailures.inc({ queue: INTEGRATION_QUEUE }))
  return {
    worker,
    async stop() {
      await worker.close()
      await connection.quit()
    },
  }
}
