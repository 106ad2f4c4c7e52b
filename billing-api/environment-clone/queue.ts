// Environment clone jobs on BullMQ: the API enqueues and polls, the scheduler process works
// them (scripts/platform.ts). The job id is the clone's id; progress is the run's CloneProgress.
// A failed attempt is retried (3 attempts, backoff from 2 s) and, thanks to the clone map,
// copies only what the failed attempt did not commit. Status is kept 7 days.
import { Queue, Worker, type Job } from 'bullmq'
import type { MikroORM } from '@mikro-orm/postgresql'
import type { Redis } from 'ioredis'
import { NotFoundError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import { quietQueueErrors, withinCommandTimeout } from '../../platform/redis.js'
import type { ComputeStatus, EnvironmentCloneJobData, EnvironmentCloneQueue } from '../queues.js'
import { runEnvironmentClone } from './run-clone.js'

export const ENVIRONMENT_CLONE_QUEUE = 'environment-clone'
const KEEP_SECONDS = 7 * 24 * 3600
const STATUS: Record<string, ComputeStatus> = {
  waiting: 'queued', prioritized: 'queued', 'waiting-children': 'queued', delayed: 'queued', active: 'running', completed: 'completed', failed: 'failed',
}

export function createEnvironmentCloneQueue(redis: Redis, prefix: string): EnvironmentCloneQueue {
  const queue = new Queue<EnvironmentCloneJobData>(ENVIRONMENT_CLONE_QUEUE, { connection: redis, prefix })
  quietQueueErrors(queue)
  return {
    async enqueue(data) {
      const jobId = newId('envclone')
      await withinCommandTimeout(redis, queue.add('clone', data, {
        jobId, attempts: 3, backoff: { type: 'exponential', delay: 2_000 },
        removeOnComplete: { age: KEEP_SECONDS }, removeOnFail: { age: KEEP_SECONDS },
      }))
      return jobId
    },
    async status(tenantId, environmentId, jobId) {
      const state = await withinCommandTimeout(redis, queue.getJobState(jobId))
      const job = (await withinCommandTimeout(redis, queue.getJob(jobId))) as Job<EnvironmentCloneJobData> | undefined
      const d = job?.data
      if (!job || !d || d.tenant_id !== tenantId || (d.source_environment_id !== environmentId && d.target_environment_id !== environmentId)) {
        throw new NotFoundError('environment clone job', jobId)
      }
      const status = STATUS[state]
      if (!status) throw new NotFoundError('environment clone job', jobId)
      const progress = status === 'completed' ? (job.returnvalue as object) : typeof job.progress === 'object' ? job.progress : null
      return {
        job_id: jobId,
        status,
        source_environment_id: d.source_environment_id,
        target_environment_id: d.target_environment_id,
        progress,
        attempts: job.attemptsMade,
        error: status === 'completed' ? null : job.failedReason || null,
        created_at: new Date(job.timestamp).toISOString(),
        finished_at: (status === 'completed' || status === 'failed') && job.finishedOn ? new Date(job.finishedOn).toISOString() : null,
      }
    },
    close: () => queue.close(),
  }
}

export function startEnvironmentCloneWorker(orm: MikroORM, redis: Redis, prefix: string) {
  const connection = redis.duplicate()
  const worker = new Worker<EnvironmentCloneJobData>(
    ENVIRONMENT_CLONE_QUEUE,
    async (job) => runEnvironmentClone(orm, job.data, (p) => job.updateProgress({ ...p, created: { ...p.created }, warnings: [...p.warnings] })),
    { connection, prefix, concurrency: 1 },
  )
  return {
    async stop() {
      await worker.close()
      await connection.quit()
    },
  }
}
