// A billing batch's drafts written with a handful of statements instead of an ORM unit of work
// per invoice: every table gets one INSERT of all its rows (json_populate_recordset over one
// JSON parameter). The invoices go first, ON CONFLICT DO NOTHING RETURNING id: the partial
// unique index on the idempotency key decides per invoice, and only the invoices inserted get
// their lines, coupon applications and `invoice.drafted` outbox rows. Everything is in the
// caller's transaction, with the subscriptions' period advance, so a batch commits or not at all.
// The rows are the ones writeSubscriptionInvoice / writeComputedLines write (same columns, same
// values), so a batch invoice and a single one cannot be told apart.
import type { EntityManager, Knex } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import { afterCommit } from '../db/after-commit.js'
import { invoicesCounted } from '../../platform/business-metrics.js'
import { D, toMoneyString } from '../pricing/index.js'
import { invoiceEventPayload, invoiceIdempotencyKey } from '../invoices/index.js'
import { invoiceParties } from '../subscriptions/index.js'
import type { Subscription } from '../subscriptions/subscription.entity.js'
import type { Invoice, InvoiceLineItem } from '../invoices/invoice.entity.js'
import type { ComputedInvoice } from './subscription-invoice.js'
import type { UsageAnalyticsItem, UsageBreakdownItem } from '../invoices/invoice.entity.js'
import { ADJUSTMENT_OF, CHECKED_FROM, adjustmentName, type AdjustmentLine } from './late-adjustments.js'

type Row = Record<string, unknown>

export interface BatchDraft {
  computed: ComputedInvoice
  /** usage_analytics / usage_breakdown per line index (usage lines only) */
  analytics: Map<number, { usage_analytics: UsageAnalyticsItem[]; usage_breakdown: UsageBreakdownItem[] | null }>
  /** late usage of closed periods (late-adjustments.ts): lines after the computed ones, already in computed's totals */
  adjustments?: AdjustmentLine[]
  /** recorded in the invoice's metadata (late-adjustments.ts) */
  lateUsageCheckedFrom?: Date
}

export interface BatchWriteResult {
  /** invoices inserted (their keys were free) */
  inserted: Invoice[]
  /** invoices whose idempotency key was taken: skipped, nothing of them written */
  conflicts: number
}

// The rows are built as object literals of one shape per table (no spreads of shared parts, the
// zero amount printed once per invoice): building them was 9-12 % of a billing day's profile.

function invoiceRow(c: ComputedInvoice, now: Date, at: Date, checkedFrom?: Date): Invoice {
  const sub = c.subscription
  const currency = sub.currency
  const zero = toMoneyString('0', currency)
  const total = D(c.total)
  const skipped = total.isZero()
  const totalMoney = toMoneyString(c.total, currency)
  const parties = invoiceParties(sub)
  const due = total.isNegative() ? zero : totalMoney
  const settled = skipped || total.isNegative()
  return {
    // the base columns the ORM fills on create (created_at / updated_at are wall time, like its onCreate)
    id: newId('inv'), tenant_id: sub.tenant_id, environment_id: sub.environment_id, status: 'published', created_at: at, updated_at: at, created_by: null, updated_by: null,
    customer_id: parties.customer_id, subscription_customer_id: parties.subscription_customer_id,
    subscription_id: sub.id, invoice_type: 'SUBSCRIPTION',
    invoice_status: skipped ? 'SKIPPED' : 'DRAFT', payment_status: settled ? 'SUCCEEDED' : 'PENDING', currency,
    billing_reason: c.reason, billing_period: sub.billing_period, period_start: c.periodStart, period_end: c.periodEnd,
    subtotal: toMoneyString(c.subtotal, currency), total_discount: toMoneyString(c.total_discount, currency), total_tax: zero, total_prepaid_credits_applied: zero,
    adjustment_amount: zero, total: totalMoney, amount_due: due, amount_paid: zero, amount_remaining: due,
    overpaid_amount: zero, refunded_amount: zero, invoice_number: null, billing_sequence: null,
    idempotency_key: invoiceIdempotencyKey(sub.id, c.reason, c.periodStart, c.periodEnd),
    description: null, issue_date: null, due_date: null, finalized_at: null, paid_at: null, voided_at: null,
    last_computed_at: now, version: 1, metadata: checkedFrom ? { [CHECKED_FROM]: checkedFrom.toISOString() } : {},
  } as Invoice
}

/**
 * One INSERT of `rows` into `table` (columns by name; absent keys are NULL), returning `returning`.
 * The JSON goes as a bound parameter of the extended protocol (knex raw), not quoted into the text.
 * (Tried on 2026-11-26: one array literal per column through `unnest`, which repeats no column
 * name per row; it cost more JavaScript than the JSON (escaping the jsonb columns' text) and
 * gained nothing measurable, docs/benchmarks.md "Billing day, third session".)
 */
async function insertRows<T>(tx: EntityManager, table: string, rows: Row[], tail = '', returning = ''): Promise<T[]> {
  if (rows.length === 0) return []
  const trx = tx.getTransactionContext<Knex.Transaction>()
  if (!trx) throw new Error('writeDraftBatch runs inside a transaction')
  const res = await trx.raw<{ rows: T[] }>(
    `INSERT INTO ${table} SELECT * FROM json_populate_recordset(NULL::${table}, ?::json) ${tail} ${returning ? `RETURNING ${returning}` : ''}`,
    [JSON.stringify(rows)],
  )
  return res.rows
}

/** Writes the drafts of a batch (caller's transaction). */
export async function writeDraftBatch(tx: EntityManager, drafts: BatchDraft[], now: Date): Promise<BatchWriteResult> {
  const at = new Date()
  const invoices = drafts.map((d) => invoiceRow(d.computed, now, at, d.lateUsageCheckedFrom))
  const inserted = new Set((await insertRows<{ id: string }>(tx, 'invoices', invoices as unknown as Row[], 'ON CONFLICT DO NOTHING', 'id')).map((r) => r.id))
  const lines: Row[] = []
  const applications: Row[] = []
  const events: Row[] = []
  for (let i = 0; i < drafts.length; i++) {
    const invoice = invoices[i]
    if (!inserted.has(invoice.id)) continue
    const d = drafts[i]
    const c = d.computed
    const sub = c.subscription
    const currency = sub.currency
    const zero = invoice.amount_paid // toMoneyString('0', currency)
    const lineIds: string[] = []
    for (let j = 0; j < c.lines.length; j++) {
      const l = c.lines[j]
      const analytics = d.analytics.get(j)
      const id = newId('inv_line')
      lineIds.push(id)
      lines.push({
        id, tenant_id: sub.tenant_id, environment_id: sub.environment_id, status: 'published', metadata: {}, created_at: at, updated_at: at, created_by: null, updated_by: null,
        invoice_id: invoice.id, customer_id: sub.customer_id, subscription_id: sub.id,
        currency, prepaid_credits_applied: zero,
        subscription_line_item_id: l.lineItem.id, price_id: l.price.id, price_type: l.price.type, meter_id: l.price.meter_id,
        display_name: l.lineItem.display_name, amount: l.amount, quantity: l.measured_quantity ?? l.quantity,
        adjusted_entitlement_quantity: l.price.type === 'USAGE' ? l.quantity : null,
        line_item_discount: l.line_item_discount, invoice_level_discount: l.invoice_level_discount,
        commitment_info: l.commitment_info ?? null, period_start: l.periodStart, period_end: l.periodEnd,
        usage_analytics: analytics?.usage_analytics ?? null, usage_breakdown: analytics?.usage_breakdown ?? null,
      } satisfies Partial<InvoiceLineItem>)
    }
    for (const a of d.adjustments ?? []) {
      const l = a.line
      lines.push({
        id: newId('inv_line'), tenant_id: sub.tenant_id, environment_id: sub.environment_id, status: 'published', metadata: { [ADJUSTMENT_OF]: a.adjusts },
        created_at: at, updated_at: at, created_by: null, updated_by: null,
        invoice_id: invoice.id, customer_id: sub.customer_id, subscription_id: sub.id,
        currency, prepaid_credits_applied: zero,
        subscription_line_item_id: l.lineItem.id, price_id: l.price.id, price_type: l.price.type, meter_id: l.price.meter_id,
        display_name: adjustmentName(a), amount: a.amount, quantity: a.quantity, adjusted_entitlement_quantity: null,
        line_item_discount: zero, invoice_level_discount: zero,
        commitment_info: null, period_start: l.periodStart, period_end: l.periodEnd, usage_analytics: null, usage_breakdown: null,
      })
    }
    for (const a of c.couponApplications) {
      const { coupon, association } = a.attached
      applications.push({
        id: newId('coupon_app'), tenant_id: sub.tenant_id, environment_id: sub.environment_id, status: 'published', metadata: {}, created_at: at, updated_at: at, created_by: null, updated_by: null,
        invoice_id: invoice.id, invoice_line_item_id: a.lineIndex === null ? null : lineIds[a.lineIndex],
        subscription_id: sub.id, coupon_id: coupon.id, coupon_association_id: association.id, currency: invoice.currency, applied_at: now,
        coupon_snapshot: {
          id: coupon.id, name: coupon.name, type: coupon.type, amount_off: coupon.amount_off, percentage_off: coupon.percentage_off,
          currency: coupon.currency, duration: coupon.duration, duration_in_periods: coupon.duration_in_periods,
        },
        discount_percentage: a.discount_percentage, discounted_amount: a.discounted_amount, original_price: a.original_price,
        final_price: a.final_price,
      })
    }
    if (invoice.invoice_status !== 'SKIPPED') {
      events.push({
        id: newId('sysevt'), tenant_id: sub.tenant_id, environment_id: sub.environment_id, status: 'published', metadata: {}, created_at: at, updated_at: at, created_by: null, updated_by: null,
        event_name: 'invoice.drafted', entity_type: 'invoice', entity_id: invoice.id,
        payload: invoiceEventPayload(invoice), published_at: null,
      })
    }
  }
  await insertRows(tx, 'invoice_line_items', lines)
  await insertRows(tx, 'coupon_applications', applications)
  await insertRows(tx, 'system_events_outbox', events)
  const written = invoices.filter((i) => inserted.has(i.id))
  const skipped = written.filter((i) => i.invoice_status === 'SKIPPED').length
  afterCommit(tx, () => {
    if (events.length) invoicesCounted.inc({ event: 'drafted' }, events.length)
    if (skipped) invoicesCounted.inc({ event: 'skipped' }, skipped)
  })
  return { inserted: written, conflicts: invoices.length - written.length }
}

/** Moves the subscriptions' current periods (one UPDATE), as advancePeriod does, with the version bump the ORM would make. */
export async function advancePeriods(tx: EntityManager, moves: { sub: Subscription; start: Date; end: Date }[]): Promise<void> {
  if (moves.length === 0) return
  await tx.getConnection().execute(
    `UPDATE subscriptions s SET current_period_start = m.start, current_period_end = m.end, version = s.version + 1, updated_at = ?
       FROM json_to_recordset(?::json) AS m(id text, start timestamptz, "end" timestamptz)
      WHERE s.id = m.id`,
    [new Date(), JSON.stringify(moves.map((m) => ({ id: m.sub.id, start: m.start, end: m.end })))], 'run', tx.getTransactionContext(),
  )
}
