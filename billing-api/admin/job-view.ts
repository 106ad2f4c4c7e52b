// What the admin API shows of a BullMQ job and of a queue: plain JSON, times as ISO strings.
import type { Job, JobState } from 'bullmq'

export const JOB_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'completed', 'failed'] as const

// a type, not an interface: it is checked against the route's response schema
export type JobView = {
  queue: string
  id: string
  name: string
  state: JobState | 'unknown'
  data: Record<string, unknown>
  attempts_made: number
  return_value: unknown
  failed_reason: string | null
  created_at: string
  processed_at: string | null
  finished_at: string | null
}

export interface FailureView {
  id: string
  name: string
  failed_reason: string
  attempts_made: number
  failed_at: string | null
}

const time = (ms: number | undefined) => (ms ? new Date(ms).toISOString() : null)

function plainData(data: unknown): Record<string, unknown> {
  return data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : {}
}

export function jobView(queue: string, job: Job, state: JobState | 'unknown'): JobView {
  return {
    queue,
    id: String(job.id),
    name: job.name,
    state,
    data: plainData(job.data),
    attempts_made: job.attemptsMade,
    return_value: state === 'completed' ? (job.returnvalue ?? null) : null,
    failed_reason: state === 'completed' ? null : job.failedReason || null,
    created_at: new Date(job.timestamp).toISOString(),
    processed_at: time(job.processedOn),
    finished_at: state === 'completed' || state === 'failed' ? time(job.finishedOn) : null,
  }
}

export function failureView(job: Job): FailureView {
  return {
    id: String(job.id),
    name: job.name,
    failed_reason: job.failedReason || 'unknown',
    attempts_made: job.attemptsMade,
    failed_at: time(job.finishedOn),
  }
}

/** Every state with a number (BullMQ leaves out the ones it was not asked for). */
export function stateCounts(raw: Record<string, number>): Record<(typeof JOB_STATES)[number], number> {
  return Object.fromEntries(JOB_STATES.map((s) => [s, raw[s] ?? 0])) as Record<(typeof JOB_STATES)[number], number>
}
