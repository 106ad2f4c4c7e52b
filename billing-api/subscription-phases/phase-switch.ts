// Job `subscription-phase-start`: a phase whose start_date is reached takes over. At the switch
// (effective = the phase start, or the current period's start when the billing schedule already
// rolled the period past it) the subscription's current line items other than add-ons end
// (archived, end_date = effective) and the phase's line items start, carrying
// subscription_phase_id; the phase's coupons are attached to those line items for
// [phase start, phase end).
// Prorations as a plan change (line-set-change.ts): recurring FIXED prices billed in ADVANCE on
// an ACTIVE subscription get the unused-time credit of the ended line item and the
// remaining-time debit of the new one over [effective, period end), one PRORATION invoice.
// Each phase switches in its own transaction under the subscription's row lock and is marked
// applied there, so a second run, or a second scheduler, finds nothing to do.
import type { EntityManager } from '@mikro-orm/postgresql'
import { newId } from '../../platform/ids.js'
import type { BillingContext } from '../context.js'
import { CouponAssociationSchema } from '../coupons/coupon-association.entity.js'
import { redeemCoupon } from '../coupons/index.js'
import type { Scope } from '../db/scope.js'
import { publishSystemEvent } from '../events/index.js'
import { invoiceIdempotencyKey } from '../invoices/index.js'
import { lineItemPeriod, priceCadence } from '../periods/cadence.js'
import { windowAmount } from '../periods/proration-window.js'
import { PriceSchema, type Price } from '../plans/price.entity.js'
import { D, toMoneyString } from '../pricing/index.js'
import { createModificationInvoice, eventPayload, lockSubscription, periodAmount, prorates, type ModificationLine } from '../subscriptions/index.js'
import { SubscriptionLineItemSchema, type Subscription, type SubscriptionLineItem } from '../subscriptions/subscription.entity.js'
import { SubscriptionPhaseSchema, type SubscriptionPhase } from './phase.entity.js'

export interface PhaseStartResult {
  started: number
  invoices: number
}

/** The share of the line item's own cadence period from `effective` to its end. */
function window(sub: Subscription, price: Price, effective: Date) {
  const period = lineItemPeriod(sub, priceCadence(price)!, effective)
  return { period, to: period.end }
}

function prorationLines(sub: Subscription, prices: Map<string, Price>, ended: SubscriptionLineItem[], added: SubscriptionLineItem[], effective: Date): ModificationLine[] {
  const lines: ModificationLine[] = []
  const { currency } = sub
  for (const li of ended) {
    const price = prices.get(li.price_id)!
    if (!prorates(sub, price, 'create_prorations')) continue
    const { period, to } = window(sub, price, effective)
    const amount = D(windowAmount(periodAmount(price, li.quantity, currency), period, effective, to, currency)).negated()
    if (amount.isZero()) continue
    lines.push({
      subscription_line_item_id: li.id, price_id: price.id, display_name: `Unused time: ${li.display_name ?? price.display_name ?? price.id}`,
      quantity: li.quantity, amount: toMoneyString(amount, currency), period_start: effective, period_end: to,
    })
  }
  for (const li of added) {
    const price = prices.get(li.price_id)!
    if (!prorates(sub, price, 'create_prorations')) continue
    const { period, to } = window(sub, price, effective)
    lines.push({
      subscription_line_item_id: li.id, price_id: price.id, display_name: `Remaining time: ${li.display_name ?? price.id}`,
      quantity: li.quantity, amount: windowAmount(periodAmount(price, li.quantity, currency), period, effective, to, currency),
      period_start: effective, period_end: to,
    })
  }
  return lines
}

/** Switches one due phase; false when it is not (or no longer) due. */
async function startPhase(ctx: BillingContext, tx: EntityManager, scope: Scope, phaseId: string, subscriptionId: string, now: Date): Promise<{ started: boolean; invoice: boolean }> {
  const sub = await lockSubscription(tx, scope, subscriptionId)
  const phase = await tx.findOne(SubscriptionPhaseSchema, { id: phaseId, ...scope, status: 'published' })
  if (!phase || phase.applied_at || phase.start_date > now) return { started: false, invoice: false }
  if (sub.subscription_status !== 'ACTIVE' && sub.subscription_status !== 'TRIALING') return { started: false, invoice: false }
  const effective = phase.start_date < sub.current_period_start ? sub.current_period_start : phase.start_date
  // the billing schedule has not yet rolled the period the phase starts in: next run
  if (effective >= sub.current_period_end) return { started: false, invoice: false }

  const current = await tx.find(SubscriptionLineItemSchema, { subscription_id: sub.id, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const ended = current.filter((l) => !l.addon_association_id && (l.end_date === null || l.end_date > effective))
  const priceIds = [...new Set([...ended.map((l) => l.price_id), ...phase.line_items.map((l) => l.price_id)])]
  const prices = new Map((await tx.find(PriceSchema, { id: { $in: priceIds }, ...scope })).map((p) => [p.id, p]))
  for (const old of ended) {
    old.end_date = effective
    old.status = 'archived'
    old.updated_by = null
  }
  const added = phase.line_items.map((l) => {
    const price = prices.get(l.price_id)!
    return tx.create(SubscriptionLineItemSchema, {
      id: newId('subs_line'), ...scope, subscription_id: sub.id, customer_id: sub.customer_id, price_id: price.id, meter_id: price.meter_id,
      currency: sub.currency, display_name: price.display_name ?? price.description ?? price.id, quantity: l.quantity, start_date: effective, end_date: null,
      addon_association_id: null, subscription_phase_id: phase.id, status: 'published', metadata: {}, created_by: null, updated_by: null,
    })
  })
  // A phase's coupon discounts the phase's own line items (not what an earlier phase still
  // bills on the same invoice): one association per line item, one redemption per coupon.
  for (const couponId of phase.coupon_ids) {
    await redeemCoupon(tx, scope, couponId, now)
    for (const li of added) {
      tx.create(CouponAssociationSchema, {
        id: newId('coupon_assoc'), ...scope, coupon_id: couponId, subscription_id: sub.id, subscription_line_item_id: li.id, subscription_phase_id: phase.id,
        start_date: phase.start_date, end_date: phase.end_date, redeemed_at: now, status: 'published', metadata: {}, created_by: null, updated_by: null,
      })
    }
  }
  phase.applied_at = now
  sub.updated_by = null
  sub.updated_at = now
  const lines = prorationLines(sub, prices, ended, added, effective)
  if (lines.length) {
    const total = toMoneyString(lines.reduce((sum, l) => sum.plus(l.amount), D(0)), sub.currency)
    const idempotencyKey = `${invoiceIdempotencyKey(sub.id, 'PRORATION', effective, sub.current_period_end)}:phase_start:${phase.id}`
    createModificationInvoice(ctx, tx, { subscription: sub, total, effective, idempotencyKey, lines }, null)
  }
  publishSystemEvent(tx, scope, { event_name: 'subscription.updated', entity_type: 'subscription', entity_id: sub.id, payload: eventPayload(sub) })
  await tx.flush()
  return { started: true, invoice: lines.length > 0 }
}

export async function startDuePhases(ctx: BillingContext, opts: { tenantId?: string } = {}): Promise<PhaseStartResult> {
  const now = ctx.clock.now()
  const em = ctx.orm.em.fork()
  const due: Pick<SubscriptionPhase, 'id' | 'tenant_id' | 'environment_id' | 'subscription_id'>[] = await em.find(
    SubscriptionPhaseSchema,
    { status: 'published', applied_at: null, start_date: { $lte: now }, ...(opts.tenantId ? { tenant_id: opts.tenantId } : {}) },
    { orderBy: { start_date: 'asc', id: 'asc' }, limit: 500, fields: ['id', 'tenant_id', 'environment_id', 'subscription_id'] },
  )
  const result: PhaseStartResult = { started: 0, invoices: 0 }
  for (const p of due) {
    const scope = { tenant_id: p.tenant_id, environment_id: p.environment_id }
    const outcome = await ctx.orm.em.fork().transactional((tx) => startPhase(ctx, tx, scope, p.id, p.subscription_id, now))
    if (outcome.started) result.started++
    if (outcome.invoice) result.invoices++
  }
  return result
}
