// The first paid period's advance charges (recurring fees billed in advance, one-time setup
// fees) are invoiced as soon as the subscription starts paid billing: on create when it is
// created ACTIVE or INCOMPLETE, on activation of a DRAFT, and at trial end (startPaidBilling).
// Billing reason SUBSCRIPTION_CREATE, idempotent by the invoice key. A subscription without
// advance charges gets no invoice here (its first invoice is the cycle invoice).
import type { EntityManager } from '@mikro-orm/postgresql'
import type { BillingContext } from '../context.js'
import { createSubscriptionInvoice } from './subscription-invoice.js'
import type { Price } from '../plans/price.entity.js'
import { billsOwnInvoices } from '../subscriptions/index.js'
import type { Subscription } from '../subscriptions/subscription.entity.js'

export async function invoiceFirstPeriod(ctx: BillingContext, tx: EntityManager, sub: Subscription, prices: Pick<Price, 'invoice_cadence'>[]): Promise<void> {
  if (sub.subscription_status !== 'ACTIVE' && sub.subscription_status !== 'INCOMPLETE') return
  if (!billsOwnInvoices(sub) || !prices.some((p) => p.invoice_cadence === 'ADVANCE')) return
  await tx.flush()
  await createSubscriptionInvoice(ctx, tx, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CREATE')
}
