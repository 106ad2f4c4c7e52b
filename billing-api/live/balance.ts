// The live balance (prepaid burn-down) and the projected invoices of a customer's current
// periods. A projection is the subscription's period invoice as billing would compute it now
// (computeSubscriptionInvoice, coupons included, taxes and credits at finalization only), with
// usage read from the live counters where they hold it (liveUsageReader).
// live balance of a wallet = what its credits are worth in its currency (as finalization counts
// them) - the unbilled usage of the current periods of the customer's subscriptions in that
// currency (their USAGE lines after discounts).
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Decimal } from 'decimal.js'
import type { BillingContext } from '../context.js'
import type { Scope } from '../db/scope.js'
import { computeSubscriptionInvoice } from '../billing/index.js'
import { D, currencyPrecision } from '../pricing/index.js'
import { balancesOf, creditsToCurrency } from '../wallets/index.js'
import type { Subscription } from '../subscriptions/subscription.entity.js'
import type { CustomerHoldings } from './catalog.js'
import type { LiveCounters } from './counters.js'
import { liveUsageReader } from './live-usage.js'

export interface ProjectedInvoice {
  subscription_id: string
  currency: string
  period_start: string
  period_end: string
  /** the invoice total so far (subtotal - discounts; taxes and credits are applied at finalization) */
  amount: string
  /** of which usage charges */
  usage_amount: string
}

export interface Projection {
  invoices: ProjectedInvoice[]
  /** oldest usage_as_of of the usage read (ms); null: unknown */
  asOf: number | null
}

const liveAt = (s: Subscription, at: Date) => s.start_date <= at && (s.end_date === null || s.end_date > at)

export async function projectInvoices(ctx: BillingContext, counters: LiveCounters, em: EntityManager, h: CustomerHoldings, at: Date): Promise<Projection> {
  const asOf: { value: number | null | undefined } = { value: undefined }
  const liveCtx: BillingContext = { ...ctx, usage: liveUsageReader(ctx, counters, asOf) }
  const invoices: ProjectedInvoice[] = []
  for (const sub of h.subscriptions.filter((s) => liveAt(s, at))) {
    const c = await computeSubscriptionInvoice(liveCtx, em, sub, sub.current_period_start, sub.current_period_end, 'SUBSCRIPTION_CYCLE')
    const usage = c.lines
      .filter((l) => l.price.type === 'USAGE')
      .reduce((sum, l) => sum.plus(l.amount).minus(l.line_item_discount).minus(l.invoice_level_discount), D(0))
    invoices.push({
      subscription_id: sub.id, currency: sub.currency, period_start: c.periodStart.toISOString(), period_end: c.periodEnd.toISOString(),
      amount: c.total, usage_amount: usage.toFixed(currencyPrecision(sub.currency)),
    })
  }
  return { invoices, asOf: asOf.value === undefined ? counters.asOf : asOf.value }
}

export interface LiveWalletBalance {
  wallet_id: string
  wallet_type: string
  currency: string
  /** the wallet's credits */
  credits: string
  /** what the credits are worth in the currency, rounded down to its minor unit (as finalization pays) */
  balance: string
  unbilled_usage: string
  /** balance - unbilled_usage (may be negative) */
  live_balance: string
}

export async function liveBalances(ctx: BillingContext, counters: LiveCounters, em: EntityManager, scope: Scope, h: CustomerHoldings, at: Date): Promise<{ wallets: LiveWalletBalance[]; asOf: number | null }> {
  const [credits, projection] = await Promise.all([
    balancesOf(em.fork(), scope, h.wallets.map((w) => w.id), at),
    projectInvoices(ctx, counters, em.fork(), h, at),
  ])
  const unbilled = new Map<string, Decimal>()
  for (const i of projection.invoices) unbilled.set(i.currency, (unbilled.get(i.currency) ?? D(0)).plus(i.usage_amount))
  const wallets = h.wallets.map((w) => {
    const digits = currencyPrecision(w.currency)
    const c = credits.get(w.id) ?? D(0)
    const worth = creditsToCurrency(c, w.conversion_rate).toDecimalPlaces(digits, D.ROUND_DOWN)
    const usage = unbilled.get(w.currency) ?? D(0)
    return {
      wallet_id: w.id, wallet_type: w.wallet_type, currency: w.currency, credits: c.toFixed(),
      balance: worth.toFixed(digits), unbilled_usage: usage.toFixed(digits), live_balance: worth.minus(usage).toFixed(digits),
    }
  })
  return { wallets, asOf: projection.asOf }
}
