// The subscription billing schedule's use case: every ACTIVE subscription whose current
// period has ended gets its cycle invoice and moves to the next period, catching up over
// several periods if the job was down. Rows are claimed with FOR UPDATE SKIP LOCKED, so two
// scheduler processes never bill the same subscription at once; the invoice idempotency key
// makes a retried run harmless too.
import { LockMode } from '@mikro-orm/core'
import type { BillingContext } from '../context.js'
import { createSubscriptionInvoice } from '../invoices/service.js'
import { nextBoundary } from './periods.js'
import { SubscriptionSchema } from './subscription.entity.js'

export interface BillDueResult {
  subscriptions: number
  invoices: number
}

export interface BillDueOptions {
  batchSize?: number
  /** limit the run to one tenant (operators' on-demand runs, tests) */
  tenantId?: string
}

export async function billDueSubscriptions(ctx: BillingContext, opts: BillDueOptions = {}): Promise<BillDueResult> {
  const batchSize = opts.batchSize ?? 100
  const result: BillDueResult = { subscriptions: 0, invoices: 0 }
  for (;;) {
    const now = ctx.clock.now()
    const claimed = await ctx.orm.em.fork().transactional(async (tx) => {
      const due = await tx.find(
        SubscriptionSchema,
        { subscription_status: 'ACTIVE', status: 'published', current_period_end: { $lte: now }, ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}) },
        { limit: batchSize, orderBy: { current_period_end: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
      )
      for (const sub of due) {
        // Invoice (a savepoint, idempotent by key) and the period advance commit together.
        await createSubscriptionInvoice(ctx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CYCLE')
        result.invoices++
        sub.current_period_start = sub.current_period_end
        sub.current_period_end = nextBoundary(sub.billing_anchor, sub.billing_period, sub.billing_period_count, sub.current_period_start)
      }
      return due.length
    })
    result.subscriptions += claimed
    // A subscription several periods behind is claimed again until it is current.
    if (claimed === 0) return result
  }
}
