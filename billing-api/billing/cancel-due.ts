// Job `subscription-scheduled-cancellation`: every ACTIVE or TRIALING subscription whose
// cancel_at has been reached is billed up to cancel_at and terminated (terminate.ts). This
// covers scheduled_date and end_of_period cancellations and any other strategy stored as a
// cancel_at. cancelled_at = cancel_at, so a late run changes nothing in the outcome.
// Rows are claimed in batches of at most `batchSize` (default CANCEL_DUE_BATCH_SIZE) with
// FOR UPDATE SKIP LOCKED, one transaction per batch: two scheduler processes never terminate
// the same subscription, and a terminated one is CANCELLED in the same commit, so a second run
// finds nothing. The billing schedule (bill-due.ts) calls executeDueCancellation too.
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import { SubscriptionSchema, type Subscription } from '../subscriptions/subscription.entity.js'
import { terminateSubscription } from '../subscriptions/index.js'
/** Subscriptions claimed per transaction (each one may bill several invoices). */
export const CANCEL_DUE_BATCH_SIZE = 50

export interface DueJobOptions {
  batchSize?: number
  /** limit the run to one tenant (operators' on-demand runs, tests) */
  tenantId?: string
}

export interface CancelDueResult {
  cancelled: number
  invoices: number
  /** non-empty batches claimed (each at most batchSize rows, one transaction each) */
  batches: number
}

export function isCancellationDue(sub: Pick<Subscription, 'cancel_at'>, now: Date): boolean {
  return sub.cancel_at !== null && sub.cancel_at <= now
}

/** Terminates a row-locked subscription whose cancel_at is reached. Returns the invoices billed. */
export async function executeDueCancellation(ctx: BillingContext, tx: EntityManager, sub: Subscription): Promise<number> {
  const end = sub.cancel_at!
  return terminateSubscription(ctx, tx, sub, end, end)
}

export async function cancelDueSubscriptions(ctx: BillingContext, opts: DueJobOptions = {}): Promise<CancelDueResult> {
  const batchSize = opts.batchSize ?? CANCEL_DUE_BATCH_SIZE
  const result: CancelDueResult = { cancelled: 0, invoices: 0, batches: 0 }
  for (;;) {
    const now = ctx.clock.now()
    const claimed = await ctx.orm.em.fork().transactional(async (tx) => {
      const due = await tx.find(
        SubscriptionSchema,
        {
          subscription_status: { $in: ['ACTIVE', 'TRIALING'] }, status: 'published', cancel_at: { $lte: now },
          ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}),
        },
        { limit: batchSize, orderBy: { cancel_at: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
      )
      for (const sub of due) result.invoices += await executeDueCancellation(ctx, tx, sub)
      return due.length
    })
    if (claimed === 0) return result
    result.cancelled += claimed
    result.batches++
  }
}
