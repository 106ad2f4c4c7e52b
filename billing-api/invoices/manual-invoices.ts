// Manual invoices: a ONE_OFF or CREDIT invoice for a customer with explicit lines, created as
// DRAFT (finalized by the usual finalize path), and the update of an invoice's user-facing
// fields (issue_date, due_date, description, metadata) with optimistic locking.
//
// Sign rule: every line amount is supplied as a non-negative magnitude. A ONE_OFF invoice
// stores it as is; a CREDIT invoice (money owed to the customer) stores every amount negated,
// so subtotal and total are negative and sums across invoices net out. A CREDIT invoice
// collects nothing: amount_due and amount_remaining are 0 and payment_status is SUCCEEDED,
// which also makes any payment on it an invalid_operation (SUCCEEDED -> OVERPAID is refused).
import { UniqueConstraintViolationException } from '@mikro-orm/core'
import type { EntityManager } from '@mikro-orm/postgresql'
import { AlreadyExistsError, InvalidOperationError, ValidationError } from '../../platform/errors.js'
import type { Clock } from '../../platform/clock.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { CustomerSchema } from '../customers/customer.entity.js'
import type { Metadata } from '../db/common.js'
import { requireReference } from '../db/scoped-records.js'
import { publishSystemEvent } from '../events/index.js'
import { PriceSchema } from '../plans/price.entity.js'
import { D, currencyPrecision, toMoneyString } from '../pricing/index.js'
import { InvoiceLineItemSchema, InvoiceSchema, type Invoice, type InvoiceLineItem } from './invoice.entity.js'
import { lockInvoice, type ChangeOptions } from './lifecycle.js'
import { invoiceEventPayload } from './serialize.js'
import { findLiveInvoice } from './live-invoice.js'

export const MANUAL_INVOICE_TYPES = ['ONE_OFF', 'CREDIT'] as const
export type ManualInvoiceType = (typeof MANUAL_INVOICE_TYPES)[number]
/** Reasons a caller may give; WALLET_AUTO_TOPUP is reserved for the wallet top-up flow (wallets/auto-topup.ts). */
export const MANUAL_BILLING_REASONS = ['MANUAL'] as const
export type ManualBillingReason = (typeof MANUAL_BILLING_REASONS)[number] | 'WALLET_AUTO_TOPUP'

export interface ManualLineInput {
  display_name: string
  /** the line's amount (not a unit price), a non-negative magnitude in the invoice currency */
  amount: string
  /** informational, > 0; default 1 */
  quantity?: string
  price_id?: string
  metadata?: Metadata
}

export interface ManualInvoiceInput {
  customer_id: string
  invoice_type: ManualInvoiceType
  currency: string
  line_items: ManualLineInput[]
  billing_reason?: ManualBillingReason
  issue_date?: string
  due_date?: string
  description?: string
  metadata?: Metadata
  /** a repeated key (while its invoice is live: not VOIDED, not deleted) is 409 already_exists */
  idempotency_key?: string
  /** the totals as the client computed them: checked against the line items, never taken as given */
  subtotal?: string
  total?: string
  amount_due?: string
}

export interface ManualTotals {
  amounts: string[]
  subtotal: string
  amount_due: string
}

/** Pure: the stored line amounts and totals (see the sign rule above). */
export function manualInvoiceTotals(type: ManualInvoiceType, currency: string, amounts: string[]): ManualTotals {
  const precision = currencyPrecision(currency)
  const sign = type === 'CREDIT' ? -1 : 1
  let sum = D(0)
  const stored = amounts.map((a, i) => {
    const v = D(a)
    if (v.isNegative()) throw new ValidationError(`line_items[${i}].amount must not be negative (a CREDIT invoice negates its amounts)`, `line_items[${i}].amount`)
    if (v.decimalPlaces() > precision) {
      throw new ValidationError(`line_items[${i}].amount has more decimals than ${currency} allows (${precision})`, `line_items[${i}].amount`)
    }
    sum = sum.plus(v)
    return toMoneyString(v.times(sign), currency)
  })
  const subtotal = toMoneyString(sum.times(sign), currency)
  return { amounts: stored, subtotal, amount_due: type === 'CREDIT' ? toMoneyString('0', currency) : subtotal }
}

function checkDates(issue: Date | null, due: Date | null): void {
  if (issue && due && due.getTime() < issue.getTime()) throw new ValidationError('due_date must not be before issue_date', 'due_date')
}

/**
 * Creates the DRAFT invoice and its lines and publishes invoice.drafted, in one transaction
 * (a savepoint inside a caller's transaction, e.g. the wallet ledger's).
 */
export async function createManualInvoice(
  em: EntityManager, clock: Clock, scope: Scope, userId: string | null, input: ManualInvoiceInput,
): Promise<{ invoice: Invoice; lines: InvoiceLineItem[] }> {
  if (input.line_items.length === 0) throw new ValidationError('line_items must not be empty', 'line_items')
  const totals = manualInvoiceTotals(input.invoice_type, input.currency, input.line_items.map((l) => l.amount))
  checkDeclaredTotals(input, totals)
  const quantities = input.line_items.map((l, i) => {
    const q = D(l.quantity ?? '1')
    if (!q.gt(0)) throw new ValidationError(`line_items[${i}].quantity must be greater than 0`, `line_items[${i}].quantity`)
    return q.toString()
  })
  const issue = input.issue_date ? new Date(input.issue_date) : null
  const due = input.due_date ? new Date(input.due_date) : null
  checkDates(issue, due)
  try {
    return await insertManualInvoice(em, clock, scope, userId, input, { totals, quantities, issue, due })
  } catch (err) {
    // Two concurrent requests with one idempotency_key: the unique index lets one through.
    if (err instanceof UniqueConstraintViolationException) throw new AlreadyExistsError(`an invoice with idempotency_key ${input.idempotency_key} exists`)
    throw err
  }
}

/** A new invoice has no tax, discount or credit yet: its total is its subtotal. */
function checkDeclaredTotals(input: ManualInvoiceInput, totals: ManualTotals): void {
  const expected = { subtotal: totals.subtotal, total: totals.subtotal, amount_due: totals.amount_due } as const
  for (const field of ['subtotal', 'total', 'amount_due'] as const) {
    const declared = input[field]
    if (declared !== undefined && !D(declared).eq(expected[field])) {
      throw new ValidationError(`${field}: ${declared} does not match the line items, which make ${expected[field]}`, field)
    }
  }
}

/** The stored idempotency key of a manual invoice: the caller's key (else the invoice id) prefixed, apart from subscription keys. */
export const manualInvoiceKey = (key: string): string => `manual:${key}`

async function insertManualInvoice(
  em: EntityManager, clock: Clock, scope: Scope, userId: string | null, input: ManualInvoiceInput,
  { totals, quantities, issue, due }: { totals: ManualTotals; quantities: string[]; issue: Date | null; due: Date | null },
): Promise<{ invoice: Invoice; lines: InvoiceLineItem[] }> {
  return em.transactional(async (tx) => {
    await requireReference(tx, CustomerSchema, scope, input.customer_id, 'customer', 'customer_id')
    const prices = await Promise.all(
      input.line_items.map(async (l, i) => {
        if (!l.price_id) return null
        const price = await requireReference(tx, PriceSchema, scope, l.price_id, 'price', `line_items[${i}].price_id`)
        if (price.currency !== input.currency) {
          throw new ValidationError(`line_items[${i}].price_id: price ${price.id} is in ${price.currency}, the invoice in ${input.currency}`, `line_items[${i}].price_id`)
        }
        return price
      }),
    )
    const id = newId('inv')
    const key = manualInvoiceKey(input.idempotency_key ?? id)
    if (input.idempotency_key !== undefined) {
      const live = await findLiveInvoice(tx, scope, key)
      if (live) throw new AlreadyExistsError(`an invoice with idempotency_key ${input.idempotency_key} exists (${live.id})`)
    }
    const none = toMoneyString('0', input.currency)
    const credit = input.invoice_type === 'CREDIT'
    const invoice = tx.create(InvoiceSchema, {
      id, ...scope, customer_id: input.customer_id, subscription_id: null, subscription_customer_id: null,
      invoice_type: input.invoice_type, invoice_status: 'DRAFT', payment_status: credit ? 'SUCCEEDED' : 'PENDING',
      currency: input.currency, billing_reason: input.billing_reason ?? 'MANUAL', billing_period: null, period_start: null, period_end: null,
      subtotal: totals.subtotal, total_discount: none, total_tax: none, total_prepaid_credits_applied: none, adjustment_amount: none,
      total: totals.subtotal, amount_due: totals.amount_due, amount_paid: none, amount_remaining: totals.amount_due,
      overpaid_amount: none, refunded_amount: none, invoice_number: null, billing_sequence: null, idempotency_key: key,
      description: input.description ?? null, issue_date: issue, due_date: due, finalized_at: null, paid_at: null, voided_at: null,
      last_computed_at: clock.now(), status: 'published', metadata: input.metadata ?? {}, created_by: userId, updated_by: userId,
    })
    // Lines are read back by (created_at, id) and share a millisecond: ids sorted in line order keep it.
    const lineIds = input.line_items.map(() => newId('inv_line')).sort()
    const lines = input.line_items.map((l, i) =>
      tx.create(InvoiceLineItemSchema, {
        id: lineIds[i], ...scope, invoice_id: id, customer_id: input.customer_id, subscription_id: null,
        subscription_line_item_id: null, price_id: prices[i]?.id ?? null, price_type: prices[i]?.type ?? null, meter_id: null,
        currency: input.currency, display_name: l.display_name, amount: totals.amounts[i], quantity: quantities[i],
        line_item_discount: none, invoice_level_discount: none, prepaid_credits_applied: none,
        period_start: null, period_end: null, status: 'published', metadata: l.metadata ?? {}, created_by: userId, updated_by: userId,
      }),
    )
    publishSystemEvent(tx, scope, { event_name: 'invoice.drafted', entity_type: 'invoice', entity_id: id, payload: invoiceEventPayload(invoice) })
    await tx.flush()
    return { invoice, lines }
  })
}

export interface InvoiceUpdateInput extends ChangeOptions {
  issue_date?: string
  due_date?: string
  description?: string | null
  metadata?: Metadata
}

const UPDATABLE = ['issue_date', 'due_date', 'description', 'metadata'] as const

/**
 * PUT /invoices/{id}: a DRAFT or FINALIZED invoice's issue_date (the user-facing date, which
 * wins over finalized_at on the PDF), due_date, description and metadata (replaced whole).
 * A stale `version` is 409 version_conflict; a change increments the version (the ORM's version
 * column), which also invalidates the cached PDF. Publishes invoice.updated.
 */
export async function updateInvoice(
  em: EntityManager, scope: Scope, userId: string | null, id: string, input: InvoiceUpdateInput,
): Promise<Invoice> {
  if (!UPDATABLE.some((f) => input[f] !== undefined)) {
    throw new ValidationError(`nothing to update: give at least one of ${UPDATABLE.join(', ')}`)
  }
  return em.transactional(async (tx) => {
    const invoice = await lockInvoice(tx, scope, id, input)
    if (invoice.invoice_status !== 'DRAFT' && invoice.invoice_status !== 'FINALIZED') {
      throw new InvalidOperationError(`invoice ${id} is ${invoice.invoice_status}; only DRAFT and FINALIZED invoices can be updated`)
    }
    const issue = input.issue_date !== undefined ? new Date(input.issue_date) : invoice.issue_date
    const due = input.due_date !== undefined ? new Date(input.due_date) : invoice.due_date
    checkDates(issue, due)
    if (input.issue_date !== undefined) invoice.issue_date = issue
    if (input.due_date !== undefined) invoice.due_date = due
    if (input.description !== undefined) invoice.description = input.description
    if (input.metadata !== undefined) invoice.metadata = input.metadata
    invoice.updated_by = userId
    publishSystemEvent(tx, scope, { event_name: 'invoice.updated', entity_type: 'invoice', entity_id: id, payload: invoiceEventPayload(invoice) })
    await tx.flush()
    return invoice
  })
}
