// The subscription billing schedule's use case: every ACTIVE subscription whose current
// period has ended gets its cycle invoice and moves to the next period, catching up over
// several periods if the job was down. A subscription whose cancel_at has passed (scheduled
// or end-of-period cancellation) is billed up to cancel_at and terminated; a TRIALING one
// whose trial has ended starts paid billing at trial_end. DRAFT subscriptions are ignored.
// Rows are claimed with FOR UPDATE SKIP LOCKED, so two scheduler processes never bill the
// same subscription at once; the invoice idempotency key makes a retried run harmless too,
// and a terminated subscription is CANCELLED in the same commit, so it is never claimed again.
import { LockMode } from '@mikro-orm/core'
import type { BillingContext } from '../context.js'
import { createSubscriptionInvoice } from '../invoices/service.js'
import { SubscriptionSchema } from './subscription.entity.js'
import { advancePeriod, startPaidBilling, terminateSubscription } from './terminate.js'

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
        {
          subscription_status: { $in: ['ACTIVE', 'TRIALING'] }, status: 'published',
          $or: [{ current_period_end: { $lte: now } }, { cancel_at: { $lte: now } }],
          ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}),
        },
        { limit: batchSize, orderBy: { current_period_end: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
      )
      for (const sub of due) {
        // Invoices (savepoints, idempotent by key) and the status or period change commit together.
        if (sub.cancel_at && sub.cancel_at <= now) {
          result.invoices += await terminateSubscription(ctx, tx, sub, sub.cancel_at, sub.cancel_at)
        } else if (sub.subscription_status === 'TRIALING') {
          result.invoices += await startPaidBilling(ctx, tx, sub)
        } else {
          await createSubscriptionInvoice(ctx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CYCLE')
          result.invoices++
          advancePeriod(sub)
        }
      }
      return due.length
    })
    result.subscriptions += claimed
    // A subscription several periods behind is claimed again until it is current.
    if (claimed === 0) return result
  }
}

