// The subscription billing schedule's use case (job `subscription-billing`): every ACTIVE
// subscription whose current period has ended gets its cycle invoice and moves to the next
// period, catching up over several periods if the job was down. DRAFT subscriptions are ignored.
// Trial ends and reached cancel_at dates have their own jobs (trial-end-due.ts, cancel-due.ts).
// This schedule never bills past an end whatever order the jobs run in: a claimed row whose
// cancel_at is reached, or whose trial has ended, goes through the same function the dedicated
// job uses (executeDueCancellation, executeTrialEnd), under the same row lock, so each move has
// one code path and the same outcome whichever job gets there first.
// Rows are claimed with FOR UPDATE SKIP LOCKED, so two scheduler processes never bill the
// same subscription at once; the invoice idempotency key makes a retried run harmless too,
// and a terminated subscription is CANCELLED in the same commit, so it is never claimed again.
import { LockMode } from '@mikro-orm/core'
import type { BillingContext } from '../context.js'
import { createSubscriptionInvoice } from './subscription-invoice.js'
import { prefetchPeriodUsage } from './usage-prefetch.js'
import { clickhouseUsage } from '../meters/index.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { executeDueCancellation, isCancellationDue } from './cancel-due.js'
import { advancePeriod, billsOwnInvoices } from '../subscriptions/index.js'
import { executeTrialEnd } from './trial-end-due.js'

/** Subscriptions claimed per transaction (a subscription several periods behind is claimed again). */
export const BILL_DUE_BATCH_SIZE = 100

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
  const batchSize = opts.batchSize ?? BILL_DUE_BATCH_SIZE
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
      // The cycle invoices' usage, read for the whole batch in one statement per period.
      const cycles = due.filter((sub) => !isCancellationDue(sub, now) && sub.subscription_status !== 'TRIALING' && billsOwnInvoices(sub))
      const prefetched = await prefetchPeriodUsage(ctx.ch, tx, cycles)
      const cycleCtx = { ...ctx, usage: prefetched.reader(clickhouseUsage(ctx.ch)) }
      for (const { id } of due) {
        // Every flush compares all the entities the transaction manages: flushed and cleared per
        // subscription, an invoice's flushes cost the same in a batch of 100 as alone.
        await tx.flush()
        tx.clear()
        const sub = await tx.findOneOrFail(SubscriptionSchema, { id })
        // Invoices (savepoints, idempotent by key) and the status or period change commit together.
        if (isCancellationDue(sub, now)) {
          result.invoices += await executeDueCancellation(ctx, tx, sub)
        } else if (sub.subscription_status === 'TRIALING') {
          result.invoices += await executeTrialEnd(ctx, tx, sub)
        } else {
          // hierarchy: an INHERITED subscription is billed on its parent's invoice
          if (billsOwnInvoices(sub)) {
            await createSubscriptionInvoice(cycleCtx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CYCLE')
            result.invoices++
          }
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

