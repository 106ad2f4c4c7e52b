// Plan price sync (POST /plans/{id}/sync/subscriptions, Flexprice's plans.syncPlanPrices): brings
// the subscriptions of a plan whose synced_price_sequence is behind the plan's max_price_sequence
// (the v2 read's plan_prices_out_of_sync) onto the plan's current prices, from now on. It is a
// change of each subscription to its own plan through the plan change's machinery
// (line-set-change.ts): one transaction per subscription, the same proration, the same invoice.
// What changes, and only that (the line items of unchanged prices are not touched: ending and
// restarting them would reset their quantity to 1 and split the period of a usage price in two,
// so tiers, packages and minimums would count twice):
// - added: the plan's published recurring prices in the subscription's currency and billing
//   period whose sequence is above its synced_price_sequence (added to the plan after the
//   subscription took its prices), unless already a current line item (modify add_line_item);
//   they start now, quantity 1, as a plan change's new prices. One-time prices are not taken
//   (they belong to a start);
// - ended: the subscription's current line items of the plan whose price is no longer published
//   (archived): they end now, as a plan change's old line items;
// - synced_price_sequence := the plan's max_price_sequence (its INHERITED children, which carry no
//   line items and are billed on it, follow in the same transaction).
// With create_prorations (always) an added FIXED price billed in ADVANCE on a paid period gets the
// debit of the remaining time and an ended one the credit of the unused time, on one PRORATION
// invoice; ARREAR and USAGE prices are billed at the period end for the part of it they ran.
// Which subscriptions: published, not CANCELLED and not INHERITED, behind the plan. ACTIVE and
// TRIALING ones are synced; DRAFT and INCOMPLETE ones are skipped and reported (a plan change
// refuses them too; they stay behind, so the first sync after their activation takes them), as
// is one the plan has no recurring price for in its currency and period anymore (it keeps its
// line items), one whose current period has not been advanced yet and one moved to another plan
// meanwhile. A second sync finds nothing behind and changes nothing; a concurrent one waits on
// the subscription's row lock and finds it synced.
import { InvalidOperationError, NotFoundError, ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { getPlan } from '../plans/index.js'
import { PriceSchema } from '../plans/price.entity.js'
import { assertUsageInArrear, applyLineSetChange, type LineSetHandler } from './line-set-change.js'
import { planChange, planLineItems } from './plan-change.js'
import { selectPrices } from './service.js'
import { SubscriptionSchema, type Subscription } from './subscription.entity.js'

export interface PlanSyncResult {
  workflow_id: string
  run_id: string
  message: string
  plan_id: string
  synced_subscription_ids: string[]
  skipped: { subscription_id: string; reason: string }[]
}

/** Thrown inside the subscription's transaction when it is no longer behind (a concurrent sync did it). */
class AlreadySynced extends Error {}

/**
 * The line-set handler of one subscription's sync. It keeps what plan() read under the row lock:
 * the invoice key's target names the price sequence synced to, so a later sync in the same minute
 * (after another price was added) writes its own PRORATION invoice.
 */
function planSyncHandler(): LineSetHandler {
  let target = ''
  let children: Subscription[] = []
  return {
    target: () => target,

    async plan(em, scope, sub, effective, input) {
      // listed on the plan, changed to another one before its row lock: not this plan's to sync
      if (sub.plan_id !== input.plan_id) throw new InvalidOperationError(`subscription ${sub.id} moved to plan ${sub.plan_id}`)
      // the plan before its prices: a price is committed with the max_price_sequence it raised
      const { plan, prices } = await getPlan(em, scope, sub.plan_id)
      if (sub.synced_price_sequence >= plan.max_price_sequence) throw new AlreadySynced()
      const chosen = selectPrices(prices, sub.currency, sub.billing_period, sub.billing_period_count).filter((p) => p.billing_period !== 'ONETIME')
      if (!chosen.length) {
        throw new ValidationError(`plan ${plan.id} has no published ${sub.currency} prices billed every ${sub.billing_period_count} ${sub.billing_period}; the subscription keeps its line items`, 'plan_id')
      }
      const current = await planLineItems(em, scope, sub.id, sub.plan_id, effective)
      const onSub = new Set(current.map((l) => l.price_id))
      const added = chosen.filter((p) => p.sequence > sub.synced_price_sequence && !onSub.has(p.id))
      assertUsageInArrear(added, 'plan_id')
      const retired = await em.find(PriceSchema, { id: { $in: [...onSub] }, ...scope, status: { $ne: 'published' }, billing_period: { $ne: 'ONETIME' } })
      const retiredIds = new Set(retired.map((p) => p.id))
      const ended = current.filter((l) => retiredIds.has(l.price_id))
      const early = ended.find((l) => l.start_date > effective)
      if (early) throw new ValidationError(`line item ${early.id} starts ${early.start_date.toISOString()}, after now`, 'effective_date')
      children = await em.find(SubscriptionSchema, { ...scope, parent_subscription_id: sub.id, subscription_type: 'INHERITED', status: 'published' })
      target = `sync:${plan.id}:${plan.max_price_sequence}`
      return {
        ended,
        added: added.map((price) => ({ price, quantity: '1', display_name: price.display_name ?? plan.name, end_date: null })),
        oldPlanId: plan.id, newPlanId: plan.id, newPriceSequence: plan.max_price_sequence,
        addonId: null, associationId: null, addonEndDate: null,
      }
    },

    /** Repeats are told apart by the sequence (plan() finds nothing behind), not by the minute. */
    findApplied: () => Promise.resolve(null),

    apply(tx, scope, userId, plan, now) {
      for (const child of children) {
        child.synced_price_sequence = plan.newPriceSequence!
        child.updated_by = userId
      }
      return planChange.apply(tx, scope, userId, plan, now)
    },
  }
}

/** Why a subscription is skipped: the refusals of a plan change; anything else fails the call (the synced ones stay synced). */
const skippable = (err: unknown): err is Error => err instanceof ValidationError || err instanceof InvalidOperationError || err instanceof NotFoundError

export async function syncPlanPrices(ctx: BillingContext, scope: Scope, userId: string, planId: string): Promise<PlanSyncResult> {
  const em = ctx.orm.em.fork()
  const { plan } = await getPlan(em, scope, planId)
  const behind = await em.find(SubscriptionSchema, {
    ...scope, plan_id: plan.id, status: 'published', subscription_status: { $ne: 'CANCELLED' }, subscription_type: { $ne: 'INHERITED' },
    synced_price_sequence: { $lt: plan.max_price_sequence },
  }, { fields: ['id'], orderBy: { created_at: 'asc', id: 'asc' } })
  const synced: string[] = []
  const skipped: PlanSyncResult['skipped'] = []
  for (const { id } of behind) {
    try {
      await applyLineSetChange(ctx, scope, userId, id, { change_type: 'plan_change', plan_id: plan.id }, planSyncHandler())
      synced.push(id)
    } catch (err) {
      if (err instanceof AlreadySynced) continue
      if (!skippable(err)) throw err
      skipped.push({ subscription_id: id, reason: err.message })
    }
  }
  const message = `plan ${plan.id} at price sequence ${plan.max_price_sequence}: ${synced.length} subscription(s) synced, ${skipped.length} skipped`
  return { workflow_id: newId('plansync'), run_id: newId('run'), message, plan_id: plan.id, synced_subscription_ids: synced, skipped }
}
