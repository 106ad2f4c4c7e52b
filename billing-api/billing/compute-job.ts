// Asynchronous invoice recomputation (spec: POST /invoices/{id}/compute without sync=true; Limits:
// 10-minute timeout, automatic retries with exponential backoff). A BullMQ queue on the platform's
// Redis connection and prefix: the API enqueues and polls, the scheduler process works the jobs
// (scripts/composition-root.ts). The workflow id is the BullMQ job id; the job's data carries the caller's
// tenant and environment, so a poll from any other scope answers 404 like an unknown id.
//
// - Attempts: 5, backoff exponential from 5 s. A domain error (invoice not found, not DRAFT or
//   SKIPPED, version conflict) fails the job at once: retrying cannot change it.
// - Timeout: an attempt running longer than 10 minutes fails and is retried. The timed-out
//   attempt's transaction is not interrupted; it commits or rolls back on its own, and the retry
//   locks the invoice row after it, so two attempts never interleave.
// - Status is kept 7 days after the job ends (then the workflow id answers 404).
import { Queue, UnrecoverableError, Worker, type Job } from 'bullmq'
import type { Redis } from 'ioredis'
import { quietQueueErrors, withinCommandTimeout } from '../../platform/redis.js'
import type { EntityManager } from '@mikro-orm/postgresql'
import { DomainError, InvalidOperationError, NotFoundError, ServiceUnavailableError, VersionConflictError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { findInScope } from '../db/scoped-records.js'
import { InvoiceSchema } from '../invoices/invoice.entity.js'
import type { ChangeOptions } from '../invoices/index.js'
import { recomputeInvoice } from './recompute.js'
import type { ComputeJobData, ComputeStatus, InvoiceComputeQueue } from '../queues.js'
import { queueJobFailures } from '../../platform/business-metrics.js'

export const INVOICE_COMPUTE_QUEUE = 'invoice-compute'

export interface ComputeJobSettings {
  attempts: number
  backoffMs: number
  timeoutMs: number
}

export const COMPUTE_JOB_SETTINGS: ComputeJobSettings = { attempts: 5, backoffMs: 5_000, timeoutMs: 10 * 60_000 }
const KEEP_SECONDS = 7 * 24 * 3600

const STATUS: Record<string, ComputeStatus> = {
  waiting: 'queued', prioritized: 'queued', 'waiting-children': 'queued', delayed: 'queued', active: 'running', completed: 'completed', failed: 'failed',
}

export function createInvoiceComputeQueue(redis: Redis, prefix: string, settings: ComputeJobSettings = COMPUTE_JOB_SETTINGS): InvoiceComputeQueue {
  const queue = new Queue<ComputeJobData>(INVOICE_COMPUTE_QUEUE, { connection: redis, prefix })
  quietQueueErrors(queue)
  return {
    async enqueue(data) {
      const jobId = newId('invcompute')
      await withinCommandTimeout(redis, queue.add('compute', data, {
        jobId,
        attempts: settings.attempts,
        backoff: { type: 'exponential', delay: settings.backoffMs },
        removeOnComplete: { age: KEEP_SECONDS },
        removeOnFail: { age: KEEP_SECONDS },
      }))
      return jobId
    },
    async status(scope, workflowId) {
      // State first, then the job: a job read before its state could show a finished state
      // with the counters of a moment earlier.
      const state = await withinCommandTimeout(redis, queue.getJobState(workflowId))
      const job = (await withinCommandTimeout(redis, queue.getJob(workflowId))) as Job<ComputeJobData> | undefined
      if (!job || job.data.tenant_id !== scope.tenant_id || job.data.environment_id !== scope.environment_id) {
        throw new NotFoundError('compute job', workflowId)
      }
      const status = STATUS[state]
      if (!status) throw new NotFoundError('compute job', workflowId)
      return {
        workflow_id: workflowId,
        status,
        invoice_id: job.data.invoice_id,
        attempts: job.attemptsMade,
        error: status === 'completed' ? null : job.failedReason || null,
        created_at: new Date(job.timestamp).toISOString(),
        finished_at: (status === 'completed' || status === 'failed') && job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
      }
    },
    close: () => queue.close(),
  }
}

async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`invoice compute timed out after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** One attempt: recompute the invoice in the job's scope. */
export async function runComputeJob(ctx: BillingContext, data: ComputeJobData, timeoutMs: number): Promise<{ invoice_id: string; version: number }> {
  const scope: Scope = { tenant_id: data.tenant_id, environment_id: data.environment_id }
  try {
    const invoice = await withTimeout(recomputeInvoice(ctx, ctx.orm.em.fork(), scope, data.invoice_id, { version: data.version }), timeoutMs)
    return { invoice_id: invoice.id, version: invoice.version }
  } catch (err) {
    if (err instanceof DomainError) throw new UnrecoverableError(`${err.code}: ${err.message}`)
    throw err
  }
}

export function startInvoiceComputeWorker(ctx: BillingContext, redis: Redis, prefix: string, settings: ComputeJobSettings = COMPUTE_JOB_SETTINGS) {
  const connection = redis.duplicate()
  const worker = new Worker<ComputeJobData>(INVOICE_COMPUTE_QUEUE, async (job) => runComputeJob(ctx, job.data, settings.timeoutMs), {
    connection, prefix, concurrency: 2,
  })
  worker.on('failed', () => queueJobFailures.inc({ queue: INVOICE_COMPUTE_QUEUE }))
  return {
    async stop() {
      await worker.close()
      await connection.quit()
    },
  }
}

/**
 * POST /invoices/{id}/compute without sync: checks now what can be checked (the invoice exists
 * in scope, the caller's version, DRAFT or SKIPPED) so those answer 404/409/400 at once, then
 * enqueues. Whether the invoice can be recomputed is decided again by the job.
 */
export async function enqueueInvoiceCompute(
  ctx: BillingContext, em: EntityManager, scope: Scope, id: string, opts: ChangeOptions = {},
): Promise<{ workflow_id: string; status: ComputeStatus; invoice_id: string }> {
  const invoice = await findInScope(em, InvoiceSchema, scope, id, 'invoice')
  if (opts.version !== undefined && opts.version !== invoice.version) {
    throw new VersionConflictError(`invoice ${id} is at version ${invoice.version}, not ${opts.version}; reload and retry`)
  }
  if (invoice.invoice_status !== 'DRAFT' && invoice.invoice_status !== 'SKIPPED') {
    throw new InvalidOperationError(`invoice ${id} is ${invoice.invoice_status}; only DRAFT and SKIPPED invoices can be recomputed`)
  }
  if (!ctx.invoiceCompute) throw new ServiceUnavailableError('the invoice compute queue is not configured in this process')
  const workflowId = await ctx.invoiceCompute.enqueue({ ...scope, invoice_id: id, ...(opts.version !== undefined ? { version: opts.version } : {}) })
  return { workflow_id: workflowId, status: 'queued', invoice_id: id }
}
