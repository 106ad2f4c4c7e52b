// Job `subscription-trial-end`: every TRIALING subscription whose trial_end has been reached
// starts paid billing at trial_end (terminate.ts startPaidBilling: ACTIVE, the first paid
// period's advance charges invoiced, subscription.updated). A trial whose cancel_at is also
// due is left to the cancellation job, which ends the trial itself before terminating.
// Catching up periods that ended since trial_end is the billing schedule's work (bill-due.ts).
// Rows are claimed in batches of at most `batchSize` (default TRIAL_END_DUE_BATCH_SIZE) with
// FOR UPDATE SKIP LOCKED, one transaction per batch; an ended trial is ACTIVE in the same
// commit, so a second run or a second scheduler process finds nothing to do.
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import type { DueJobOptions } from './cancel-due.js'
import { SubscriptionSchema, type Subscription } from '../subscriptions/subscription.entity.js'
import { startPaidBilling } from '../subscriptions/index.js'
/** Subscriptions claimed per transaction. */
export const TRIAL_END_DUE_BATCH_SIZE = 50

export interface TrialEndDueResult {
  ended: number
  invoices: number
  batches: number
}

/** Ends the trial of a row-locked TRIALING subscription. Returns the invoices billed. */
export async function executeTrialEnd(ctx: BillingContext, tx: EntityManager, sub: Subscription): Promise<number> {
  return startPaidBilling(ctx, tx, sub)
}

export async function endDueTrials(ctx: BillingContext, opts: DueJobOptions = {}): Promise<TrialEndDueResult> {
  const batchSize = opts.batchSize ?? TRIAL_END_DUE_BATCH_SIZE
  const result: TrialEndDueResult = { ended: 0, invoices: 0, batches: 0 }
  for (;;) {
    const now = ctx.clock.now()
    const claimed = await ctx.orm.em.fork().transactional(async (tx) => {
      const due = await tx.find(
        SubscriptionSchema,
        {
          subscription_status: 'TRIALING', status: 'published', current_period_end: { $lte: now },
          $or: [{ cancel_at: null }, { cancel_at: { $gt: now } }],
          ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}),
        },
        { limit: batchSize, orderBy: { current_period_end: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
      )
      for (const sub of due) result.invoices += await executeTrialEnd(ctx, tx, sub)
      return due.length
    })
    if (claimed === 0) return result
    result.ended += claimed
    result.batches++
  }
}
