// The recurring jobs, by name: what each one runs (its name and cadence are in
// platform/job-catalogue.ts). Each job is idempotent: safe to run twice for the same tick
// and safe when two scheduler processes run at once.
import type { BillingContext } from '../billing-api/context.js'
import { applyDueCreditGrants } from '../billing-api/credit-grants/index.js'
import { runBilling, recomputeLateUsage, type BillDueOptions, invoiceUsageOverThreshold, cancelDueSubscriptions, endDueTrials } from '../billing-api/billing/index.js'
import { finalizeDueInvoices } from '../billing-api/invoices/index.js'
import { expireWalletCredits } from '../billing-api/wallets/index.js'
import { retryStaleWebhooks } from '../billing-api/webhooks/index.js'
import { startDuePhases } from '../billing-api/subscription-phases/index.js'
import { checkUsageAlerts } from '../billing-api/usage-alerts/index.js'
import { JOB_CATALOGUE, type JobCadence, type JobData, type JobName } from '../platform/job-catalogue.js'

export type { JobData } from '../platform/job-catalogue.js'

/** Test seams (scheduler.ts SchedulerOptions.seams) */
export interface JobSeams {
  billingRun?: BillDueOptions['hooks']
}

export interface JobDefinition extends JobCadence {
  /** returns the number of items processed; `data` comes from on-demand triggers */
  run: (ctx: BillingContext, data: JobData, seams?: JobSeams) => Promise<number>
}

type Run = JobDefinition['run']

// a job the catalogue names without a run here, or the reverse, does not compile
const runs = {
  'subscription-billing': {
    // every attempt of a job continues its run record, so the figure is the run's true total (billing/billing-runs.ts)
    run: async (ctx, data, seams) => (await runBilling(ctx, { tenantId: data.tenant_id, runId: data.run_id, hooks: seams?.billingRun })).invoices,
  },
  // Trial ends and reached cancel_at dates (billing-api/subscriptions/README.md#scheduled-jobs);
  // subscription-billing executes them too when it claims such a row first.
  'subscription-trial-end': {
    run: async (ctx, data) => (await endDueTrials(ctx, { tenantId: data.tenant_id })).ended,
  },
  // Subscription phases whose start is reached take over (billing-api/subscription-phases/phase-switch.ts).
  'subscription-phase-start': {
    run: async (ctx, data) => (await startDuePhases(ctx, { tenantId: data.tenant_id })).started,
  },
  'subscription-scheduled-cancellation': {
    run: async (ctx, data) => (await cancelDueSubscriptions(ctx, { tenantId: data.tenant_id })).cancelled,
  },
  'auto-invoice-threshold': {
    run: async (ctx, data) => (await invoiceUsageOverThreshold(ctx, { tenantId: data.tenant_id })).invoices,
  },
  'invoice-finalization': {
    // drafts whose period got usage after it ended are recomputed first (billing/late-usage.ts)
    run: (ctx, data) => finalizeDueInvoices(ctx, { tenantId: data.tenant_id, beforeFinalize: recomputeLateUsage(ctx) }),
  },
  'wallet-credit-expiry': {
    run: (ctx, data) => expireWalletCredits(ctx, { tenantId: data.tenant_id }),
  },
  'stale-webhook-retry': {
    run: async (ctx, data) => (await retryStaleWebhooks(ctx, undefined, data.tenant_id)).length,
  },
  // Feature usage alerts (billing-api/usage-alerts/check-due.ts): after aggregation, on the buckets.
  'usage-alerts': {
    run: (ctx, data) => checkUsageAlerts(ctx, { tenantId: data.tenant_id }),
  },
  'credit-grant-application': {
    run: async (ctx, data) => (await applyDueCreditGrants(ctx, { tenantId: data.tenant_id })).applied,
  },
} satisfies Record<JobName, { run: Run }>

/** by name: the catalogue's cadence and the run; tests add jobs of their own */
export const JOBS: Record<string, JobDefinition> = Object.fromEntries(
  Object.entries(runs).map(([name, { run }]) => [name, { ...JOB_CATALOGUE[name], run }]),
)
