// The scheduler's recurring jobs as the rest of the platform knows them: name, cadence and the
// queue they run on. What each job does lives above, in scheduler/jobs.ts (it calls billing-api's
// use cases); the admin API and the CLI only need this catalogue, so they sit below the scheduler.
import type { Config } from './config.js'

export const SCHEDULER_QUEUE = 'scheduler'
/** every run, recurring or on demand (the CLI, the admin API): finished jobs kept for status */
export const JOB_RUN_OPTIONS = { removeOnComplete: 100, removeOnFail: 500 }

export interface JobData {
  tenant_id?: string
  /** set by the worker: `<job name>:<job id>`, the same for every attempt of the job */
  run_id?: string
}

export interface JobCadence {
  /** repeat interval; takes anything with the config (a BillingContext does) */
  everyMs: (deps: { config: Config }) => number
}

const cadences = {
  'subscription-billing': { everyMs: ({ config }) => config.billingScheduleEveryMs },
  'subscription-trial-end': { everyMs: () => 60_000 },
  'subscription-phase-start': { everyMs: () => 60_000 },
  'subscription-scheduled-cancellation': { everyMs: () => 60_000 },
  'auto-invoice-threshold': { everyMs: () => 5 * 60_000 },
  'invoice-finalization': { everyMs: () => 5 * 60_000 },
  'wallet-credit-expiry': { everyMs: () => 15 * 60_000 },
  'stale-webhook-retry': { everyMs: () => 10 * 60_000 },
  'usage-alerts': { everyMs: ({ config }) => config.usageAlertsEveryMs },
  'credit-grant-application': { everyMs: () => 15 * 60_000 },
} satisfies Record<string, JobCadence>

export type JobName = keyof typeof cadences

/** by name; tests add a job of their own here and in scheduler/jobs.ts */
export const JOB_CATALOGUE: Record<string, JobCadence> = cadences
