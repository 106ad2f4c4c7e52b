// The late-event rule, third part (README "Billing day"): usage that reaches a period after its
// cycle invoice was closed (FINALIZED, or SKIPPED at zero) is billed on the subscription's next
// cycle invoice as adjustment lines: per usage line of the closed period, the period recomputed
// from today's usage minus what was billed for it (its own line plus earlier adjustments on
// invoices that are not voided), in quantity and amount, negative too (a volume tier can make
// more usage cost less). Coupons are not applied again to an adjustment.
//
// Exactly once, without a ledger of events: the difference is taken against what invoices
// already hold, in the batch's transaction that inserts the next invoice, so a retried or
// stalled batch (rolled back, or its invoice key taken) bills nothing twice and a repeat finds
// a zero difference. Which periods to recompute: each cycle invoice records in its metadata
// `late_usage_checked_from` (C): every event acknowledged before C is billed, on this invoice,
// an earlier one or its adjustments. A run bills a period only once the ingestion watermark has
// passed its end E (bill-due.ts), so it sees every event acknowledged before E: the new
// invoice's own usage and the closed periods' recomputed ones hold them, and a period still
// DRAFT holds them once finalized (its finalization comes later and sees at least as much,
// late-usage.ts). So C = E, and the next run looks only for usage acknowledged since C: usage
// that arrived in time is never priced twice.
import type { Decimal } from 'decimal.js'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { queryLateUsageSpans } from '../../clickhouse/queries/meter-usage.js'
import { InvalidOperationError } from '../../platform/errors.js'
import { D, toMoneyString } from '../pricing/index.js'
import type { Subscription } from '../subscriptions/subscription.entity.js'
import type { InvoiceReads } from './invoice-reads.js'
import { computeSubscriptionInvoice, type ComputedInvoice } from './subscription-invoice.js'
import type { PricedLine } from './charges.js'

/** The metadata key of an adjustment line: the id of the closed invoice it adjusts. */
export const ADJUSTMENT_OF = 'adjustment_of'
/** The metadata key of a cycle invoice: see the file comment. */
export const CHECKED_FROM = 'late_usage_checked_from'

export interface AdjustmentLine {
  /** the closed invoice whose period the line adjusts */
  adjusts: string
  line: PricedLine
  quantity: string
  amount: string
}

export interface SubscriptionAdjustments {
  lines: AdjustmentLine[]
  checkedFrom: Date
}

interface PastInvoice {
  id: string
  subscription_id: string
  invoice_status: string
  period_start: Date
  period_end: Date
  checked_from: string | null
}

const scopeKey = (s: Scope) => `${s.tenant_id}\u0000${s.environment_id}`

async function rows<T>(tx: EntityManager, sql: string, params: unknown[]): Promise<T[]> {
  return tx.getConnection().execute<T[]>(sql, params, 'all', tx.getTransactionContext())
}

/**
 * The adjustment lines of each subscription's next cycle invoice (billed for its current period)
 * and the `late_usage_checked_from` that invoice records. Reads only (caller's transaction).
 */
export async function lateAdjustments(
  ctx: BillingContext, tx: EntityManager, subs: Subscription[], reads: InvoiceReads,
): Promise<Map<string, SubscriptionAdjustments>> {
  const out = new Map<string, SubscriptionAdjustments>()
  const groups = new Map<string, Subscription[]>()
  for (const s of subs) groups.set(scopeKey(s), [...(groups.get(scopeKey(s)) ?? []), s])
  for (const group of groups.values()) {
    for (const [id, adj] of await scopeAdjustments(ctx, tx, group, reads)) out.set(id, adj)
  }
  return out
}

async function scopeAdjustments(ctx: BillingContext, tx: EntityManager, subs: Subscription[], reads: InvoiceReads) {
  const { tenant_id, environment_id } = subs[0]
  const past = await rows<PastInvoice>(tx,
    `SELECT id, subscription_id, invoice_status, period_start, period_end, metadata->>'${CHECKED_FROM}' AS checked_from
       FROM invoices
      WHERE tenant_id = ? AND environment_id = ? AND subscription_id IN (SELECT json_array_elements_text(?::json))
        AND invoice_type = 'SUBSCRIPTION' AND billing_reason = 'SUBSCRIPTION_CYCLE' AND status = 'published' AND invoice_status <> 'VOIDED'
      ORDER BY period_end`,
    [tenant_id, environment_id, JSON.stringify(subs.map((s) => s.id))])
  const result = new Map<string, SubscriptionAdjustments>()
  const closedOf = new Map<string, PastInvoice[]>()
  const since = new Map<string, Date>()
  for (const sub of subs) {
    const S = sub.current_period_start
    const earlier = past.filter((p) => p.subscription_id === sub.id && new Date(p.period_end) <= S)
    // the latest invoice's checkpoint; none recorded (invoices of another path, or of an earlier
    // version): the end of the latest period, whose draft held every event acknowledged before it
    const recorded = earlier.filter((p) => p.checked_from !== null).at(-1)?.checked_from
    const latestEnd = earlier.at(-1)?.period_end
    since.set(sub.id, recorded ? new Date(recorded) : latestEnd ? new Date(latestEnd) : sub.start_date)
    result.set(sub.id, { lines: [], checkedFrom: sub.current_period_end })
    const closed = earlier.filter((p) => p.invoice_status === 'FINALIZED' || p.invoice_status === 'SKIPPED')
    if (closed.length) closedOf.set(sub.id, closed)
  }
  if (closedOf.size === 0) return result

  // One ClickHouse statement: which customers got usage acknowledged since the earliest checkpoint.
  const withClosed = subs.filter((s) => closedOf.has(s.id))
  const customersOf = new Map<string, Map<string, string[]>>()
  for (const sub of withClosed) {
    const of = reads.customersOf(sub)
    const byPeriod = new Map<string, string[]>()
    for (const p of closedOf.get(sub.id)!) byPeriod.set(p.id, await of(new Date(p.period_start), new Date(p.period_end)))
    customersOf.set(sub.id, byPeriod)
  }
  const spans = await queryLateUsageSpans(ctx.ch, {
    tenantId: tenant_id, environmentId: environment_id,
    externalCustomerIds: [...new Set([...customersOf.values()].flatMap((m) => [...m.values()].flat()))],
    // the month partitions of the closed periods only
    from: new Date(Math.min(...withClosed.flatMap((s) => closedOf.get(s.id)!.map((p) => new Date(p.period_start).getTime())))),
    before: new Date(Math.max(...withClosed.map((s) => s.current_period_start.getTime()))),
    acknowledgedSince: new Date(Math.min(...withClosed.map((s) => since.get(s.id)!.getTime()))),
  })
  if (spans.length === 0) return result
  const spanOf = new Map(spans.map((s) => [s.customer, s]))
  const touched = (sub: Subscription, p: PastInvoice) => (customersOf.get(sub.id)!.get(p.id) ?? []).some((c) => {
    const span = spanOf.get(c)
    return span !== undefined && span.first < new Date(p.period_end) && span.last >= new Date(p.period_start)
  })
  const candidates = withClosed.flatMap((sub) => closedOf.get(sub.id)!.filter((p) => touched(sub, p)).map((p) => ({ sub, p })))
  if (candidates.length === 0) return result

  const billed = await billedUsage(tx, { tenant_id, environment_id }, [...new Set(candidates.map((c) => c.sub.id))], new Set(candidates.map((c) => c.p.id)))
  for (const { sub, p } of candidates) {
    const now: ComputedInvoice = await computeSubscriptionInvoice(ctx, tx, sub, new Date(p.period_start), new Date(p.period_end), 'SUBSCRIPTION_CYCLE', p.id)
    for (const line of now.lines) {
      if (line.price.type !== 'USAGE') continue
      const was = billed.get(lineKey(p.id, line.lineItem.id, line.periodStart, line.periodEnd)) ?? { amount: D(0), quantity: D(0) }
      const amount = D(line.amount).minus(was.amount)
      const quantity = D(line.measured_quantity ?? line.quantity).minus(was.quantity)
      if (amount.isZero() && quantity.isZero()) continue
      result.get(sub.id)!.lines.push({ adjusts: p.id, line, quantity: quantity.toString(), amount: toMoneyString(amount, sub.currency) })
    }
  }
  return result
}

const lineKey = (invoiceId: string, lineItemId: string | null, start: Date | string, end: Date | string) =>
  `${invoiceId}\u0000${lineItemId}\u0000${new Date(start).getTime()}\u0000${new Date(end).getTime()}`

/** What the closed invoices' usage lines and their adjustments (on invoices not voided) billed, by closed invoice and line. */
async function billedUsage(tx: EntityManager, scope: Scope, subscriptionIds: string[], closed: Set<string>) {
  const lines = await rows<{ invoice_id: string; adjusts: string | null; subscription_line_item_id: string | null; period_start: Date; period_end: Date; amount: string; quantity: string }>(tx,
    `SELECT l.invoice_id, l.metadata->>'${ADJUSTMENT_OF}' AS adjusts, l.subscription_line_item_id, l.period_start, l.period_end, l.amount::text, l.quantity::text
       FROM invoices i JOIN invoice_line_items l ON l.invoice_id = i.id AND l.tenant_id = i.tenant_id AND l.environment_id = i.environment_id
      WHERE i.tenant_id = ? AND i.environment_id = ? AND i.subscription_id IN (SELECT json_array_elements_text(?::json))
        AND i.status = 'published' AND i.invoice_status <> 'VOIDED' AND l.status = 'published' AND l.price_type = 'USAGE'`,
    [scope.tenant_id, scope.environment_id, JSON.stringify(subscriptionIds)])
  const billed = new Map<string, { amount: Decimal; quantity: Decimal }>()
  for (const l of lines) {
    const of = l.adjusts ?? l.invoice_id
    if (!closed.has(of) || !l.period_start || !l.period_end) continue
    const key = lineKey(of, l.subscription_line_item_id, l.period_start, l.period_end)
    const sum = billed.get(key) ?? { amount: D(0), quantity: D(0) }
    billed.set(key, { amount: sum.amount.plus(l.amount), quantity: sum.quantity.plus(l.quantity) })
  }
  return billed
}

/** The adjustment lines added to a computed draft: subtotal and total grow by their sum (no coupon applies to them). */
export function withAdjustments(c: ComputedInvoice, lines: Pick<AdjustmentLine, 'amount'>[]): ComputedInvoice {
  if (lines.length === 0) return c
  const sum = lines.reduce((s, l) => s.plus(l.amount), D(0))
  const currency = c.subscription.currency
  return { ...c, subtotal: toMoneyString(D(c.subtotal).plus(sum), currency), total: toMoneyString(D(c.total).plus(sum), currency) }
}

/** The display name of an adjustment line: the line's own, with the adjusted period. */
export function adjustmentName(a: AdjustmentLine): string {
  const day = (d: Date) => d.toISOString().slice(0, 10)
  return `${a.line.lineItem.display_name ?? ''} (late usage ${day(a.line.periodStart)} to ${day(a.line.periodEnd)})`.trim()
}

/**
 * Recomputing a draft keeps its adjustment lines (they bill other periods) and returns their
 * amounts; a closed (SKIPPED) invoice that later invoices adjusted cannot be recomputed, or its
 * late usage would be billed twice. Caller's transaction.
 */
export async function keepAdjustments(tx: EntityManager, scope: Scope, invoice: { id: string; subscription_id: string | null }): Promise<{ amount: string }[]> {
  const adjusted = await rows<{ invoice_id: string }>(tx,
    `SELECT l.invoice_id FROM invoices i JOIN invoice_line_items l ON l.invoice_id = i.id
      WHERE i.tenant_id = ? AND i.environment_id = ? AND i.subscription_id = ? AND i.invoice_status <> 'VOIDED' AND i.status = 'published'
        AND l.metadata->>'${ADJUSTMENT_OF}' = ? LIMIT 1`,
    [scope.tenant_id, scope.environment_id, invoice.subscription_id, invoice.id])
  if (adjusted.length) {
    throw new InvalidOperationError(`invoice ${invoice.id}'s late usage was billed as adjustments on invoice ${adjusted[0].invoice_id}; it cannot be recomputed`)
  }
  await tx.getConnection().execute(
    `DELETE FROM invoice_line_items WHERE tenant_id = ? AND environment_id = ? AND invoice_id = ? AND metadata->>'${ADJUSTMENT_OF}' IS NULL`,
    [scope.tenant_id, scope.environment_id, invoice.id], 'run', tx.getTransactionContext())
  return rows<{ amount: string }>(tx,
    `SELECT amount::text FROM invoice_line_items WHERE tenant_id = ? AND environment_id = ? AND invoice_id = ?`,
    [scope.tenant_id, scope.environment_id, invoice.id])
}
