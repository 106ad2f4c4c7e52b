// BullMQ job schedulers (no HTTP cron endpoints). A job's name selects its definition;
// every run is measured (runs, items, failures, duration).
import { Queue, QueueEvents, Worker, type Job } from 'bullmq'
import type { Redis } from 'ioredis'
import type { BillingContext } from '../billing-api/context.js'
import { schedulerJobItems, schedulerJobRuns, schedulerJobSeconds } from '../platform/metrics.js'
import { JOB_RUN_OPTIONS, SCHEDULER_QUEUE, type JobData } from '../platform/job-catalogue.js'
import { JOBS, type JobSeams } from './jobs.js'

export interface Scheduler {
  queue: Queue
  /** Runs a job now (operators' CLI, tests) and resolves with its item count. */
  trigger(name: string, data?: JobData, timeoutMs?: number): Promise<number>
  stop(): Promise<void>
}

export interface SchedulerOptions {
  ctx: BillingContext
  redis: Redis
  prefix: string
  /** false: enqueue and process on demand only, no recurring schedule (tests) */
  schedule?: boolean
  concurrency?: number
  /**
   * Test seams: hooks inside a billing run, and a worker that does not renew its job locks (a
   * process whose event loop is blocked or that lost Redis: its jobs are taken as stalled).
   */
  seams?: JobSeams & { skipLockRenewal?: boolean }
}

export async function startScheduler(opts: SchedulerOptions): Promise<Scheduler> {
  const connection = opts.redis
  // BullMQ leaves connections it was given open; the scheduler owns these two and closes them.
  const eventsConnection = connection.duplicate()
  const workerConnection = connection.duplicate()
  const queue = new Queue(SCHEDULER_QUEUE, { connection, prefix: opts.prefix })
  const events = new QueueEvents(SCHEDULER_QUEUE, { connection: eventsConnection, prefix: opts.prefix })
  await events.waitUntilReady()

  const worker = new Worker(
    SCHEDULER_QUEUE,
    async (job: Job) => {
      const def = JOBS[job.name]
      if (!def) throw new Error(`unknown job ${job.name}`)
      const end = schedulerJobSeconds.startTimer({ job_name: job.name })
      try {
        // the job names its run: a stalled or retried job continues the same run record. Job ids
        // count from 1 per queue, again after Redis is emptied or under another prefix, so the
        // job's creation time is part of the name (a new job never continues an old run).
        const items = await def.run(opts.ctx, { ...((job.data ?? {}) as JobData), run_id: `${job.name}:${job.id}:${job.timestamp}` }, opts.seams)
        schedulerJobRuns.inc({ job_name: job.name, outcome: 'success' })
        schedulerJobItems.inc({ job_name: job.name }, items)
        return items
      } catch (err) {
        schedulerJobRuns.inc({ job_name: job.name, outcome: 'failure' })
        throw err
      } finally {
        end()
      }
    },
    {
      connection: workerConnection, prefix: opts.prefix, concurrency: opts.concurrency ?? 1,
      // the lock is renewed every lockDuration / 2 while a job runs; an expired one is found by the next stalled check
      lockDuration: opts.ctx.config.schedulerLockMs, stalledInterval: opts.ctx.config.schedulerLockMs,
      ...(opts.seams?.skipLockRenewal ? { skipLockRenewal: true } : {}),
    },
  )

  // e.g. a job whose lock expired while it ran: its completion is refused (another attempt owns it now)
  worker.on('error', (err) => console.error(`[scheduler] ${err.message}`))

  if (opts.schedule !== false) {
    for (const [name, def] of Object.entries(JOBS)) {
      await queue.upsertJobScheduler(name, { every: def.everyMs(opts.ctx) }, { name, opts: JOB_RUN_OPTIONS })
    }
  }

  return {
    queue,
    async trigger(name, data = {}, timeoutMs = 60_000) {
      if (!JOBS[name]) throw new Error(`unknown job ${name}; known: ${Object.keys(JOBS).join(', ')}`)
      const job = await queue.add(name, data, JOB_RUN_OPTIONS)
      return (await job.waitUntilFinished(events, timeoutMs)) as number
    },
    async stop() {
      await worker.close()
      await events.close()
      await queue.close()
      await Promise.all([eventsConnection.quit(), workerConnection.quit()])
    },
  }
}
