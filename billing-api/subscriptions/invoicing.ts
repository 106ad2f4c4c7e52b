// What the subscription lifecycle (create, activate, modify, terminate) needs from billing:
// the invoices a lifecycle step writes. Billing implements it (billing/subscription-invoicing.ts)
// and the composition root puts it on the context, so billing reads subscriptions while
// subscriptions never imports billing.
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Clock } from '../../platform/clock.js'
import type { BillingContext } from '../context.js'
import type { Invoice, InvoiceLineItem } from '../invoices/invoice.entity.js'
import type { BillingReason } from '../invoices/index.js'
import type { Price } from '../plans/price.entity.js'
import type { Subscription } from './subscription.entity.js'

export interface SubscriptionInvoiceRow {
  /** a pre-generated id, when the caller needs it before the row exists */
  id?: string
  subscription: Subscription
  billingReason: string
  periodStart: Date
  periodEnd: Date
  idempotencyKey: string
  /** sum of the lines before discounts; a negative net (credits) stays as the total with nothing due */
  subtotal: string
  totalDiscount?: string
  total: string
  now: Date
  description?: string | null
  metadata?: Record<string, unknown>
  /** a zero total is SKIPPED (spec) unless 'draft': a trial charged automatically waits for its card */
  zeroAmount?: 'skip' | 'draft'
  /** paid_at of a SKIPPED invoice (a manually collected trial counts as paid now) */
  skippedPaidAt?: Date
}

export type InvoiceLineRow = Pick<InvoiceLineItem, 'price_id' | 'price_type' | 'meter_id' | 'display_name' | 'amount' | 'quantity' | 'period_start' | 'period_end'>
  & Partial<Pick<InvoiceLineItem, 'subscription_line_item_id' | 'adjusted_entitlement_quantity' | 'line_item_discount' | 'invoice_level_discount' | 'commitment_info'>>

export interface SubscriptionInvoicing {
  /** the invoice of a new subscription's first period where a price bills in advance */
  invoiceFirstPeriod(ctx: BillingContext, tx: EntityManager, sub: Subscription, prices: Pick<Price, 'invoice_cadence'>[]): Promise<void>
  /** the zero-amount invoice that opens a trial */
  createTrialInvoice(tx: EntityManager, clock: Clock, sub: Subscription): Promise<Invoice>
  /** the invoice of [start, end) for `reason`, once per key */
  createSubscriptionInvoice(ctx: BillingContext, tx: EntityManager, sub: Subscription, start: Date, end: Date, reason: BillingReason): Promise<Invoice>
  /** the final invoice of a subscription ended at `end` mid-period */
  createProrationInvoice(ctx: BillingContext, tx: EntityManager, sub: Subscription, end: Date): Promise<Invoice>
  /** writes an invoice row and its lines computed by the caller */
  writeSubscriptionInvoice(tx: EntityManager, row: SubscriptionInvoiceRow, lines: InvoiceLineRow[]): { invoice: Invoice; lines: InvoiceLineItem[] }
}

declare module '../context.js' {
  interface BillingContext {
    /** invoices written by lifecycle steps; wired by the composition root */
    subscriptionInvoicing: SubscriptionInvoicing
  }
}
