// The scheduled finalization's use case: DRAFT invoices computed longer ago than the
// finalization delay (config.finalizationDelayMinutes, spec: 2 hours) are finalized.
// Age is measured from last_computed_at (a recomputation restarts the delay), or
// created_at for a draft never computed. An invoice whose period has not started yet (the
// advance charges of a subscription starting in the future) is not finalized before its
// period_start, so nobody is charged early. Rows are claimed in bounded batches with
// FOR UPDATE SKIP LOCKED, so two scheduler processes never finalize the same invoice; a
// finalized invoice no longer matches, so a repeated run does nothing.
import { LockMode } from '@mikro-orm/core'
import type { BillingContext } from '../context.js'
import type { EntityManager } from '@mikro-orm/postgresql'
import { InvoiceSchema, type Invoice } from './invoice.entity.js'
import { finalizeLockedInvoices } from './lifecycle.js'

export interface FinalizeDueOptions {
  batchSize?: number
  /**
   * Called in the batch's transaction before the invoices are finalized; returns the invoices to
   * finalize (billing's late-usage recompute, billing/late-usage.ts: drafts whose period got
   * usage after it ended are recomputed first; one that became SKIPPED is left out).
   */
  beforeFinalize?: (tx: EntityManager, invoices: Invoice[]) => Promise<Invoice[]>
  /** limit the run to one tenant (operators' on-demand runs, tests) */
  tenantId?: string
}

/** Returns the number of invoices finalized. */
export async function finalizeDueInvoices(ctx: BillingContext, opts: FinalizeDueOptions = {}): Promise<number> {
  const batchSize = opts.batchSize ?? 100
  let finalized = 0
  for (;;) {
    const cutoff = new Date(ctx.clock.now().getTime() - ctx.config.finalizationDelayMinutes * 60_000)
    const claimed = await ctx.orm.em.fork().transactional(async (tx) => {
      const due = await tx.find(
        InvoiceSchema,
        {
          invoice_status: 'DRAFT',
          status: 'published',
          $and: [
            { $or: [{ last_computed_at: { $lte: cutoff } }, { last_computed_at: null, created_at: { $lte: cutoff } }] },
            // A first-period invoice of a subscription starting in the future waits for its start.
            { $or: [{ period_start: null }, { period_start: { $lte: ctx.clock.now() } }] },
          ],
          ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}),
        },
        { limit: batchSize, orderBy: { last_computed_at: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
      )
      // numbers are taken as one block per environment at the end of the batch (lifecycle.ts)
      const ready = opts.beforeFinalize ? await opts.beforeFinalize(tx, due) : due
      await finalizeLockedInvoices(ctx, tx, ready)
      return due.length
    })
    finalized += claimed
    if (claimed < batchSize) return finalized
  }
}
