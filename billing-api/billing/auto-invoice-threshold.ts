// Job `auto-invoice-threshold` (spec: automatic invoice threshold scan, every 5 minutes). For
// every ACTIVE STANDALONE subscription with auto_invoice_threshold set, whose current period
// is still running and whose cancel_at is not reached, the arrear usage not yet billed is
// measured for [last cut, now), now truncated to the minute (the invoice key's precision):
// the last cut is the end of the period's last live AUTO_INVOICE_THRESHOLD invoice, else
// current_period_start. When that amount is above zero and at least the threshold, an
// AUTO_INVOICE_THRESHOLD invoice bills exactly that window's usage (no fixed charges), and
// the cycle invoice later bills only the usage after the last cut (usage-cuts.ts).
// Rows are claimed in batches of at most `batchSize` (default AUTO_INVOICE_THRESHOLD_BATCH_SIZE)
// with FOR UPDATE SKIP LOCKED, walking ids upwards; the same row lock serialises the scan with
// the billing schedule and with cancellation, and createSubscriptionInvoice's key makes a
// repeated run in the same minute a no-op. Usage that reaches ClickHouse after a cut with a
// timestamp before it is not billed (as for a cycle invoice created before late events arrive).
import { LockMode } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import { computeSubscriptionInvoice, createSubscriptionInvoice } from './subscription-invoice.js'
import { D } from '../pricing/index.js'
import type { DueJobOptions } from './cancel-due.js'
import { SubscriptionSchema, type Subscription } from '../subscriptions/subscription.entity.js'
import { lastThresholdCut } from './usage-cuts.js'

/** Subscriptions measured per transaction (each costs one ClickHouse query per usage price). */
export const AUTO_INVOICE_THRESHOLD_BATCH_SIZE = 50

export interface ThresholdScanResult {
  scanned: number
  invoices: number
  batches: number
}

const toMinute = (d: Date) => new Date(Math.floor(d.getTime() / 60_000) * 60_000)

/** Bills a row-locked subscription's unbilled usage when it reached the threshold. Returns 1 when invoiced. */
export async function invoiceIfOverThreshold(ctx: BillingContext, tx: EntityManager, sub: Subscription, now: Date): Promise<number> {
  if (sub.auto_invoice_threshold === null) return 0
  const cutAt = toMinute(now)
  const from = (await lastThresholdCut(tx, sub, sub.current_period_start, sub.current_period_end)) ?? sub.current_period_start
  if (cutAt <= from || cutAt >= sub.current_period_end) return 0
  const unbilled = await computeSubscriptionInvoice(ctx, tx, sub, from, cutAt, 'AUTO_INVOICE_THRESHOLD')
  const amount = D(unbilled.subtotal)
  if (amount.lte(0) || amount.lt(sub.auto_invoice_threshold)) return 0
  await createSubscriptionInvoice(ctx, tx, sub, from, cutAt, 'AUTO_INVOICE_THRESHOLD')
  return 1
}

export async function invoiceUsageOverThreshold(ctx: BillingContext, opts: DueJobOptions = {}): Promise<ThresholdScanResult> {
  const batchSize = opts.batchSize ?? AUTO_INVOICE_THRESHOLD_BATCH_SIZE
  const result: ThresholdScanResult = { scanned: 0, invoices: 0, batches: 0 }
  const now = ctx.clock.now()
  let after = ''
  for (;;) {
    const claimed = await ctx.orm.em.fork().transactional(async (tx) => {
      const batch = await tx.find(
        SubscriptionSchema,
        {
          id: { $gt: after }, subscription_status: 'ACTIVE', subscription_type: 'STANDALONE', status: 'published',
          auto_invoice_threshold: { $ne: null }, current_period_end: { $gt: now },
          $or: [{ cancel_at: null }, { cancel_at: { $gt: now } }],
          ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}),
        },
        { limit: batchSize, orderBy: { id: 'asc' }, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
      )
      for (const sub of batch) result.invoices += await invoiceIfOverThreshold(ctx, tx, sub, now)
      if (batch.length) after = batch[batch.length - 1].id
      return batch.length
    })
    if (claimed === 0) return result
    result.scanned += claimed
    result.batches++
  }
}
