// The subscription billing schedule's use case (job `subscription-billing`): every ACTIVE
// subscription whose current period has ended gets its cycle invoice and moves to the next
// period, catching up over several periods if the job was down. DRAFT subscriptions are ignored.
// Trial ends and reached cancel_at dates have their own jobs (trial-end-due.ts, cancel-due.ts).
// This schedule never bills past an end whatever order the jobs run in: a claimed row whose
// cancel_at is reached, or whose trial has ended, goes through the same function the dedicated
// job uses (executeDueCancellation, executeTrialEnd), under the same row lock, so each move has
// one code path and the same outcome whichever job gets there first.
//
// Set-based (README "Billing day"): a claimed batch (BILLING_BATCH_SIZE) reads its usage in one
// ClickHouse statement per period (totals, per source, per group: the lines' quantities and
// their analytics), its Postgres rows in a handful of statements (batch-reads.ts), is priced in
// memory by the same code as a single invoice, and is written with one INSERT per table
// (invoice-batch-rows.ts) and one UPDATE of the periods, in one transaction. Cancellations and
// trial ends in a batch take their per-subscription path in the same transaction.
// Rows are claimed with FOR UPDATE SKIP LOCKED, so parallel batches (BILLING_RUN_CONCURRENCY per
// process, any number of scheduler processes) never bill the same subscription at once; the
// invoice idempotency key makes a repeat harmless, and the period advance commits with the
// invoice, so a crash anywhere leaves each subscription billed exactly once or not yet.
// A period is billed only when the ingestion watermark has passed its end (ingest-watermark.ts).
import { LockMode, type FilterQuery } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import { newId } from '../../platform/ids.js'
import { billingBatchSeconds } from '../../platform/metrics.js'
import { computeSubscriptionInvoice } from './subscription-invoice.js'
import { prefetchBatchUsage } from './usage-prefetch.js'
import { clickhouseUsage } from '../meters/index.js'
import { SubscriptionSchema, type Subscription } from '../subscriptions/subscription.entity.js'
import { executeDueCancellation, isCancellationDue } from './cancel-due.js'
import { advancePeriod, billsOwnInvoices } from '../subscriptions/index.js'
import { executeTrialEnd } from './trial-end-due.js'
import { BatchReads } from './batch-reads.js'
import { plainFind } from '../db/plain-rows.js'
import { lineUsageAnalytics } from './usage-analytics.js'
import { advancePeriods, writeDraftBatch, type BatchDraft } from './invoice-batch-rows.js'
import { lateAdjustments, withAdjustments } from './late-adjustments.js'
import { closeBillingRun, countBatch, openBillingRun, recordFailures, type BillingRun } from './billing-runs.js'

/** Invoices priced between two turns of the event loop. */
const YIELD_EVERY = 20

/** Subscriptions claimed per transaction by default (BILLING_BATCH_SIZE overrides it). */
export const BILL_DUE_BATCH_SIZE = 200

export interface BillDueResult {
  subscriptions: number
  invoices: number
}

export interface BillDueOptions {
  batchSize?: number
  /** limit the run to one tenant (operators' on-demand runs, tests) */
  tenantId?: string
  /** the run's record (billing-runs.ts): the job's id, so a retried job continues it */
  runId?: string
  /** batches billed at once in this process (default BILLING_RUN_CONCURRENCY) */
  concurrency?: number
  /** test seams for crash tests: called inside a batch's transaction before it commits, and after it committed */
  hooks?: { beforeCommit?: (batch: number) => void | Promise<void>; afterCommit?: (batch: number) => void | Promise<void> }
}

export async function billDueSubscriptions(ctx: BillingContext, opts: BillDueOptions = {}): Promise<BillDueResult> {
  const run = await runBilling(ctx, opts)
  return { subscriptions: run.subscriptions, invoices: run.invoices }
}

type DueFilter = Record<string, unknown>

/** The run: its record after it finished (true figures, also those of earlier attempts of the same run id). */
export async function runBilling(ctx: BillingContext, opts: BillDueOptions = {}): Promise<BillingRun> {
  const runId = opts.runId ?? newId('billrun')
  const batchSize = opts.batchSize ?? ctx.config.billing?.batchSize ?? BILL_DUE_BATCH_SIZE
  const workers = Math.max(1, opts.concurrency ?? ctx.config.billing?.runConcurrency ?? 1)
  const due = (at: Date): DueFilter => ({
    subscription_status: { $in: ['ACTIVE', 'TRIALING'] }, status: 'published',
    $or: [{ current_period_end: { $lte: at } }, { cancel_at: { $lte: at } }],
    ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}),
  })
  // Bill only what the ingestion watermark has passed: every event acknowledged before it is counted.
  const watermark = await passedWatermark(ctx, due)
  const cutoff = () => new Date(Math.min(ctx.clock.now().getTime(), watermark))
  const total = await ctx.orm.em.fork().count(SubscriptionSchema, due(cutoff()))
  await openBillingRun(ctx.orm, runId, 'subscription-billing', opts.tenantId ?? null, total, Number.isFinite(watermark) ? new Date(watermark) : null)
  let batchNo = 0
  const work = async () => {
    for (;;) {
      const n = ++batchNo
      const t0 = performance.now()
      const claimed = await billBatch(ctx, runId, n, batchSize, cutoff(), due, opts)
      if (claimed === 0) return
      billingBatchSeconds.observe((performance.now() - t0) / 1000)
      await opts.hooks?.afterCommit?.(n)
    }
  }
  try {
    for (;;) {
      await Promise.all(Array.from({ length: workers }, work))
      // Batches of this run's earlier attempt (a stalled job still running) or of another run may
      // hold rows: wait for their commits (FOR UPDATE without SKIP LOCKED), so the figures this
      // run reports include everything due at its start, then look again.
      if (!(await anyDueLeft(ctx, runId, due(cutoff())))) break
    }
    return await closeBillingRun(ctx.orm, runId, 'completed')
  } catch (err) {
    await closeBillingRun(ctx.orm, runId, 'failed').catch(() => undefined)
    throw err
  }
}

/**
 * The ingestion watermark (epoch ms, billing clock). While it has not yet passed the end of a
 * period the clock says is due, it is sampled again for up to BILLING_WATERMARK_WAIT_MS: the
 * aggregator commits its offsets right after the usage is written, so a period that ended a
 * moment ago is usually passed within that wait; what is still behind is billed by a later run.
 */
async function passedWatermark(ctx: BillingContext, due: (at: Date) => DueFilter): Promise<number> {
  const source = ctx.ingestWatermark
  if (!source) return Infinity
  const deadline = Date.now() + (ctx.config.billing?.watermarkWaitMs ?? 0)
  for (;;) {
    const now = ctx.clock.now()
    // never passed yet (no sample behind the consumer's commits): nothing is billable
    const watermark = Math.max(0, await source.watermarkMs())
    if (watermark >= now.getTime() || Date.now() >= deadline) return watermark
    const em = ctx.orm.em.fork()
    const [byClock, byWatermark] = await Promise.all([em.count(SubscriptionSchema, due(now)), em.count(SubscriptionSchema, due(new Date(watermark)))])
    if (byClock === byWatermark) return watermark
    await new Promise((r) => setTimeout(r, 100))
  }
}

async function failedIds(tx: EntityManager, runId: string): Promise<string[]> {
  const rows = await tx.getConnection().execute<{ subscription_id: string }[]>(
    'SELECT subscription_id FROM billing_run_failures WHERE run_id = ?', [runId], 'all', tx.getTransactionContext(),
  )
  return rows.map((r) => r.subscription_id)
}

async function anyDueLeft(ctx: BillingContext, runId: string, filter: DueFilter): Promise<boolean> {
  return ctx.orm.em.fork().transactional(async (tx) => {
    const skip = await failedIds(tx, runId)
    const left = await tx.find(SubscriptionSchema, { ...filter, ...(skip.length ? { id: { $nin: skip } } : {}) }, { limit: 1, lockMode: LockMode.PESSIMISTIC_WRITE, fields: ['id'] })
    return left.length > 0
  })
}

/** Claims, prices and writes one batch in one transaction; returns the number of subscriptions claimed. */
async function billBatch(
  ctx: BillingContext, runId: string, batchNo: number, batchSize: number, now: Date, dueAt: (at: Date) => DueFilter, opts: BillDueOptions,
): Promise<number> {
  return ctx.orm.em.fork().transactional(async (tx) => {
    const skip = await failedIds(tx, runId)
    // Plain rows (plain-rows.ts): the cycles are written with SQL, not through the unit of work.
    const claimed = await plainFind(
      tx, SubscriptionSchema,
      { ...dueAt(now), ...(skip.length ? { id: { $nin: skip } } : {}) } as FilterQuery<Subscription>,
      { limit: batchSize, orderBy: { current_period_end: 'asc', id: 'asc' }, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
    )
    if (claimed.length === 0) return 0
    const special = claimed.filter((s) => isCancellationDue(s, now) || s.subscription_status === 'TRIALING')
    const cycles = claimed.filter((s) => !special.includes(s))
    const { drafts, failures, advanced } = await priceCycles(ctx, tx, cycles)
    const written = await writeDraftBatch(tx, drafts, ctx.clock.now())
    await advancePeriods(tx, advanced.map((sub) => {
      const next = { ...sub }
      advancePeriod(next)
      return { sub, start: next.current_period_start, end: next.current_period_end }
    }))
    let invoices = written.inserted.length
    for (const { id } of special) {
      // Every flush compares all the entities the transaction manages: flushed and cleared per subscription.
      await tx.flush()
      tx.clear()
      const sub = await tx.findOneOrFail(SubscriptionSchema, { id })
      // Invoices (savepoints, idempotent by key) and the status or period change commit together.
      invoices += isCancellationDue(sub, now) ? await executeDueCancellation(ctx, tx, sub) : await executeTrialEnd(ctx, tx, sub)
    }
    await tx.flush()
    await recordFailures(tx, runId, failures)
    await countBatch(tx, runId, { subscriptions: claimed.length - failures.length, invoices, conflicts: written.conflicts })
    await opts.hooks?.beforeCommit?.(batchNo)
    return claimed.length
  })
}

/**
 * The cycle invoices of a batch, priced in memory: one usage read per period for the batch, its
 * Postgres rows loaded once. A subscription whose invoice cannot be computed is reported, not
 * advanced, and the rest of the batch goes on.
 */
async function priceCycles(ctx: BillingContext, tx: EntityManager, cycles: Subscription[]) {
  const own = cycles.filter(billsOwnInvoices)
  // the batch's Postgres rows, then its usage: one ClickHouse statement per period
  const reads = await BatchReads.load(tx, own)
  const prefetched = await prefetchBatchUsage(ctx.ch, own, (group) => reads.usageScope(group))
  const cycleCtx = { ...ctx, usage: prefetched.reader(clickhouseUsage(ctx.ch)) }
  // usage that reached closed periods late: adjustment lines on these invoices (late-adjustments.ts)
  const adjustments = await lateAdjustments(ctx, tx, own, reads)
  const drafts: BatchDraft[] = []
  const failures: { subscription_id: string; error: string }[] = []
  // hierarchy: an INHERITED subscription is billed on its parent's invoice; it only moves on
  const advanced: Subscription[] = cycles.filter((s) => !billsOwnInvoices(s))
  for (const [k, sub] of own.entries()) {
    // The reads are answered from memory, so without this the whole batch would be priced in one
    // turn of the event loop: let timers and sockets (the API in this process, the other batch's
    // answers, the Postgres watchdog's probe) run between slices of the batch.
    if (k > 0 && k % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve))
    try {
      const computed = await computeSubscriptionInvoice(cycleCtx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CYCLE', undefined, reads)
      // usage_analytics / usage_breakdown of the usage lines, from the same batch read (usage-analytics.ts)
      const analytics: BatchDraft['analytics'] = new Map()
      const customersOf = reads.customersOf(sub)
      const meters = new Map((await reads.meters(sub, [...new Set(computed.lines.flatMap((l) => (l.price.meter_id ? [l.price.meter_id] : [])))])).map((m) => [m.id, m]))
      for (const [i, l] of computed.lines.entries()) {
        const meter = l.price.type === 'USAGE' && l.price.meter_id ? meters.get(l.price.meter_id) : undefined
        if (!meter || !l.periodStart || !l.periodEnd) continue
        const line = { amount: l.amount, currency: sub.currency, period_start: l.periodStart, period_end: l.periodEnd }
        analytics.set(i, await lineUsageAnalytics(cycleCtx, meter, await customersOf(l.periodStart, l.periodEnd), line))
      }
      const late = adjustments.get(sub.id)!
      drafts.push({ computed: withAdjustments(computed, late.lines), analytics, adjustments: late.lines, lateUsageCheckedFrom: late.checkedFrom })
      advanced.push(sub)
    } catch (err) {
      failures.push({ subscription_id: sub.id, error: err instanceof Error ? err.message : String(err) })
    }
  }
  return { drafts, failures, advanced }
}
