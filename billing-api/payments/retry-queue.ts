// The dunning retries as BullMQ delayed jobs (queue `payment-retry`, the platform's Redis
// connection and prefix). payment-failures.ts schedules one job per invoice and failure
// number (job id dunning-<invoice>-<attempt>, so a repeat adds none); the scheduler process
// works them (scripts/platform.ts) with retry-step.ts. A job that cannot reach the provider is
// retried 3 times with backoff; a domain error ends it.
import { Queue, UnrecoverableError, Worker } from 'bullmq'
import type { Redis } from 'ioredis'
import { DomainError } from '../../platform/errors.js'
import { quietQueueErrors, withinCommandTimeout } from '../../platform/redis.js'
import type { BillingContext } from '../context.js'
import type { PaymentRetryJob, PaymentRetryQueue } from '../queues.js'
import { retryJobId } from './dunning-schedule.js'
import { runPaymentRetry } from './retry-step.js'

export const PAYMENT_RETRY_QUEUE = 'payment-retry'
const KEEP_SECONDS = 7 * 24 * 3600

export function createPaymentRetryQueue(redis: Redis, prefix: string): PaymentRetryQueue & { queue: Queue<PaymentRetryJob> } {
  const queue = new Queue<PaymentRetryJob>(PAYMENT_RETRY_QUEUE, { connection: redis, prefix })
  quietQueueErrors(queue)
  return {
    queue,
    async schedule(job, delayMs) {
      await withinCommandTimeout(redis, queue.add('retry', job, {
        jobId: retryJobId(job.invoice_id, job.attempt),
        delay: delayMs,
        attempts: 3,
        backoff: { type: 'exponential', delay: 30_000 },
        removeOnComplete: { age: KEEP_SECONDS },
        removeOnFail: { age: KEEP_SECONDS },
      }))
    },
    close: () => queue.close(),
  }
}

export function startPaymentRetryWorker(ctx: BillingContext, redis: Redis, prefix: string) {
  const connection = redis.duplicate()
  const worker = new Worker<PaymentRetryJob>(PAYMENT_RETRY_QUEUE, async (job) => {
    try {
      return await runPaymentRetry(ctx, job.data)
    } catch (err) {
      if (err instanceof DomainError) throw new UnrecoverableError(`${err.code}: ${err.message}`)
      throw err
    }
  }, { connection, prefix, concurrency: 2 })
  return {
    async stop() {
      await worker.close()
      await connection.quit()
    },
  }
}
