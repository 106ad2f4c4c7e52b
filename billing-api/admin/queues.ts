// The background queues as operators see them: every BullMQ queue of the platform by name, on
// its own Redis connection that fails fast (503) like the API's other queue calls. Jobs run
// where the workers are (the scheduler process); this side only enqueues, reads and retries.
import { Queue, type Job } from 'bullmq'
import type { Redis } from 'ioredis'
import { InvalidOperationError, NotFoundError } from '../../platform/errors.js'
import { createQueueRedis, quietQueueErrors, withinCommandTimeout } from '../../platform/redis.js'
import { JOB_CATALOGUE, JOB_RUN_OPTIONS, SCHEDULER_QUEUE, type JobData } from '../../platform/job-catalogue.js'
import { INVOICE_COMPUTE_QUEUE } from '../billing/index.js'
import { INTEGRATION_QUEUE } from '../integrations/index.js'
import { WEBHOOK_QUEUE } from '../webhooks/index.js'
import { ENVIRONMENT_CLONE_QUEUE } from '../environment-clone/index.js'
import type { Config } from '../../platform/config.js'
import { failureView, jobView, JOB_STATES, stateCounts, type FailureView, type JobView } from './job-view.js'

export const QUEUE_NAMES = [SCHEDULER_QUEUE, WEBHOOK_QUEUE, INVOICE_COMPUTE_QUEUE, INTEGRATION_QUEUE, ENVIRONMENT_CLONE_QUEUE] as const

export interface QueueStatus {
  queue: string
  counts: ReturnType<typeof stateCounts>
  recent_failures: FailureView[]
}

// a type, not an interface: it is checked against the route's response schema
export type ScheduledJob = {
  name: string
  every_ms: number
  /** when the recurring schedule runs it next; null where this platform schedules nothing */
  next_run_at: string | null
}

export class AdminQueues {
  private readonly queues: Map<string, Queue>

  private constructor(private readonly redis: Redis, prefix: string) {
    this.queues = new Map(QUEUE_NAMES.map((name) => {
      const q = new Queue(name, { connection: redis, prefix })
      quietQueueErrors(q)
      return [name, q]
    }))
  }

  static open(config: Config): AdminQueues {
    return new AdminQueues(createQueueRedis(config.redisUrl, config.redisCommandTimeoutMs), config.redisPrefix)
  }

  private queue(name: string): Queue {
    const q = this.queues.get(name)
    if (!q) throw new NotFoundError('queue', name)
    return q
  }

  private within<T>(work: Promise<T>): Promise<T> {
    return withinCommandTimeout(this.redis, work)
  }

  private async job(queue: string, id: string): Promise<Job> {
    const job = (await this.within(this.queue(queue).getJob(id))) as Job | undefined
    if (!job) throw new NotFoundError(`${queue} job`, id)
    return job
  }

  async scheduled(everyMs: (name: string) => number): Promise<ScheduledJob[]> {
    const schedulers = await this.within(this.queue(SCHEDULER_QUEUE).getJobSchedulers())
    const next = new Map(schedulers.map((s) => [s.key, s.next]))
    return Object.keys(JOB_CATALOGUE).map((name) => {
      const at = next.get(name)
      return { name, every_ms: everyMs(name), next_run_at: at ? new Date(at).toISOString() : null }
    })
  }

  /** Enqueues a scheduler job now; the scheduler process's worker runs it. */
  async trigger(name: string, data: JobData): Promise<JobView> {
    if (!JOB_CATALOGUE[name]) throw new NotFoundError('job', name)
    const job = await this.within(this.queue(SCHEDULER_QUEUE).add(name, data, JOB_RUN_OPTIONS))
    return jobView(SCHEDULER_QUEUE, job, 'waiting')
  }

  async get(queue: string, id: string): Promise<JobView> {
    // The state first: a job read before its state could show a finished state with older fields.
    const state = await this.within(this.queue(queue).getJobState(id))
    return jobView(queue, await this.job(queue, id), state)
  }

  async status(queue: string, failures: number): Promise<QueueStatus> {
    const q = this.queue(queue)
    const counts = await this.within(q.getJobCounts(...JOB_STATES))
    const failed = failures > 0 ? ((await this.within(q.getFailed(0, failures - 1))) as Job[]) : []
    return { queue, counts: stateCounts(counts), recent_failures: failed.filter(Boolean).map(failureView) }
  }

  async retry(queue: string, id: string): Promise<JobView> {
    const job = await this.job(queue, id)
    const state = await this.within(job.getState())
    if (state !== 'failed') throw new InvalidOperationError(`${queue} job ${id} is ${state}; only failed jobs can be retried`)
    await this.within(job.retry('failed'))
    return this.get(queue, id)
  }

  /** Retries every failed job of the queue; resolves with how many were moved back to waiting. */
  async retryFailed(queue: string): Promise<number> {
    const q = this.queue(queue)
    const seen = new Set<string>()
    let retried = 0
    for (;;) {
      // Retried jobs leave the failed set, so the first page is always the next batch.
      const page = ((await this.within(q.getFailed(0, 99))) as Job[]).filter((j) => j && !seen.has(String(j.id)))
      if (page.length === 0) return retried
      for (const job of page) {
        seen.add(String(job.id))
        await this.within(job.retry('failed'))
        retried++
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.queues.values()].map((q) => q.close()))
    await this.redis.quit().catch(() => this.redis.disconnect())
  }
}
