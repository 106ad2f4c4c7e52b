// The one place a subscription invoice row and its lines are written (cycle, create, threshold,
// proration, trial-start): parties, statuses, zero amounts printed in the currency's decimals,
// and `invoice.drafted` once per creation. Callers own the computation and the transaction.
import type { EntityManager } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { afterCommit } from '../db/after-commit.js'
import { invoicesCounted } from '../../platform/business-metrics.js'
import { publishSystemEvent } from '../events/index.js'
import { D, toMoneyString } from '../pricing/index.js'
import { invoiceParties, type InvoiceLineRow, type SubscriptionInvoiceRow } from '../subscriptions/index.js'
import type { Subscription } from '../subscriptions/subscription.entity.js'
import { InvoiceLineItemSchema, InvoiceSchema, type Invoice, type InvoiceLineItem } from '../invoices/invoice.entity.js'
import { invoiceEventPayload } from '../invoices/index.js'
export type { InvoiceLineRow, SubscriptionInvoiceRow }

const scopeOf = (s: Subscription): Scope => ({ tenant_id: s.tenant_id, environment_id: s.environment_id })

/**
 * A new DRAFT (or SKIPPED, for a zero amount) subscription invoice in `tx`, with its lines;
 * publishes invoice.drafted unless SKIPPED.
 */
export function writeSubscriptionInvoice(tx: EntityManager, row: SubscriptionInvoiceRow, lines: InvoiceLineRow[]): { invoice: Invoice; lines: InvoiceLineItem[] } {
  const sub = row.subscription
  const scope = scopeOf(sub)
  const money = (x: string) => toMoneyString(x, sub.currency)
  const total = D(row.total)
  const skipped = total.isZero() && row.zeroAmount !== 'draft'
  const due = total.isNegative() ? money('0') : money(row.total)
  const settled = skipped || total.isNegative()
  const invoice = tx.create(InvoiceSchema, {
    id: row.id ?? newId('inv'), ...scope, ...invoiceParties(sub), subscription_id: sub.id, invoice_type: 'SUBSCRIPTION',
    invoice_status: skipped ? 'SKIPPED' : 'DRAFT', payment_status: settled ? 'SUCCEEDED' : 'PENDING', currency: sub.currency,
    billing_reason: row.billingReason, billing_period: sub.billing_period, period_start: row.periodStart, period_end: row.periodEnd,
    subtotal: money(row.subtotal), total_discount: money(row.totalDiscount ?? '0'), total_tax: money('0'), total_prepaid_credits_applied: money('0'),
    adjustment_amount: money('0'), total: money(row.total), amount_due: due, amount_paid: money('0'), amount_remaining: due,
    overpaid_amount: money('0'), refunded_amount: money('0'), invoice_number: null, billing_sequence: null, idempotency_key: row.idempotencyKey,
    description: row.description ?? null, issue_date: null, due_date: null, finalized_at: null,
    paid_at: skipped ? (row.skippedPaidAt ?? null) : null, voided_at: null,
    last_computed_at: row.now, status: 'published', metadata: row.metadata ?? {}, created_by: null, updated_by: null,
  })
  const written = writeInvoiceLines(tx, invoice, sub, lines)
  if (!skipped) publishSystemEvent(tx, scope, { event_name: 'invoice.drafted', entity_type: 'invoice', entity_id: invoice.id, payload: invoiceEventPayload(invoice) })
  else afterCommit(tx, () => invoicesCounted.inc({ event: 'skipped' }))
  return { invoice, lines: written }
}

/** Lines under `invoice`, in order. */
export function writeInvoiceLines(tx: EntityManager, invoice: Invoice, sub: Subscription, lines: InvoiceLineRow[]): InvoiceLineItem[] {
  return lines.map((l) => tx.create(InvoiceLineItemSchema, {
    id: newId('inv_line'), ...scopeOf(sub), invoice_id: invoice.id, customer_id: sub.customer_id, subscription_id: sub.id,
    currency: sub.currency, status: 'published', metadata: {}, prepaid_credits_applied: toMoneyString('0', sub.currency),
    // a row may leave the discounts out: 0, as the columns' onCreate would
    subscription_line_item_id: null, line_item_discount: '0', invoice_level_discount: '0', ...l,
  }))
}
