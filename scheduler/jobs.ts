// The recurring jobs, by name. Each job is idempotent: safe to run twice for the same tick
// and safe when two scheduler processes run at once.
import type { BillingContext } from '../billing-api/context.js'
import { billDueSubscriptions } from '../billing-api/subscriptions/bill-due.js'

export interface JobData {
  tenant_id?: string
}

export interface JobDefinition {
  /** repeat interval */
  everyMs: (ctx: BillingContext) => number
  /** returns the number of items processed; `data` comes from on-demand triggers */
  run: (ctx: BillingContext, data: JobData) => Promise<number>
}

export const JOBS: Record<string, JobDefinition> = {
  'subscription-billing': {
    everyMs: (ctx) => ctx.config.billingScheduleEveryMs,
    run: async (ctx, data) => (await billDueSubscriptions(ctx, { tenantId: data.tenant_id })).invoices,
  },
}
