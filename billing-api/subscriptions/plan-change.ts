// Modification change type plan_change: the subscription moves to another plan at
// effective_date (default now; within the current period: a change "at period end" is an
// effective_date shortly before it, there is no deferred change). The old plan's current line
// items end there (archived, end_date = effective_date) and the new plan's recurring prices in
// the subscription's currency and cadence start there, each with quantity 1 like a new
// subscription (one-time prices of the new plan are not taken: they belong to a start).
// Add-on line items stay. With create_prorations, advance fixed charges get the unused-time
// credit of the old plan and the remaining-time debit of the new one (line-set-change.ts).
import type { EntityManager } from '@mikro-orm/postgresql'
import { NotFoundError, ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { PriceSchema } from '../plans/price.entity.js'
import { getPlan } from '../plans/index.js'
import { assertUsageInArrear, refuseFields, requestedMinute, sameMinute, type LineSetHandler } from './line-set-change.js'
import { selectPrices } from './service.js'
import { SubscriptionLineItemSchema, type SubscriptionLineItem } from './subscription.entity.js'

/** The subscription's current line items priced by its plan (not add-ons). */
export async function planLineItems(em: EntityManager, scope: Scope, subId: string, planId: string, effective: Date): Promise<SubscriptionLineItem[]> {
  const items = await em.find(SubscriptionLineItemSchema, { subscription_id: subId, ...scope, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
  const prices = await em.find(PriceSchema, { id: { $in: items.map((l) => l.price_id) }, ...scope, entity_type: 'PLAN', entity_id: planId })
  const ofPlan = new Set(prices.map((p) => p.id))
  return items.filter((l) => ofPlan.has(l.price_id) && !l.addon_association_id && (l.end_date === null || l.end_date > effective))
}

export const planChange: LineSetHandler = {
  target: (input) => input.plan_id ?? '',

  async plan(em, scope, sub, effective, input) {
    refuseFields(input, ['line_item_id', 'price_id', 'quantity', 'addon_id', 'end_date'])
    if (!input.plan_id) throw new ValidationError('plan_id is required with plan_change', 'plan_id')
    if (input.plan_id === sub.plan_id) throw new ValidationError(`subscription ${sub.id} is already on plan ${sub.plan_id}`, 'plan_id')
    const { plan, prices } = await getPlan(em, scope, input.plan_id).catch((err) => {
      if (err instanceof NotFoundError) throw new ValidationError(`plan ${input.plan_id} not found`, 'plan_id')
      throw err
    })
    if (plan.status !== 'published') throw new ValidationError(`plan ${plan.id} is ${plan.status} and takes no subscriptions`, 'plan_id')
    if (!prices.some((p) => p.currency === sub.currency)) {
      throw new ValidationError(`plan ${plan.id} has no prices in ${sub.currency}, the subscription's currency`, 'plan_id')
    }
    const chosen = selectPrices(prices, sub.currency, sub.billing_period, sub.billing_period_count).filter((p) => p.billing_period !== 'ONETIME')
    if (!chosen.length) {
      throw new ValidationError(`plan ${plan.id} has no ${sub.currency} prices billed every ${sub.billing_period_count} ${sub.billing_period}`, 'plan_id')
    }
    assertUsageInArrear(chosen, 'plan_id')
    const ended = await planLineItems(em, scope, sub.id, sub.plan_id, effective)
    const early = ended.find((l) => l.start_date > effective)
    if (early) throw new ValidationError(`effective_date must not be before line item ${early.id}'s start ${early.start_date.toISOString()}`, 'effective_date')
    return {
      ended,
      added: chosen.map((price) => ({ price, quantity: '1', display_name: price.display_name ?? plan.name, end_date: null })),
      oldPlanId: sub.plan_id, newPlanId: plan.id, newPriceSequence: plan.max_price_sequence,
      addonId: null, associationId: null, addonEndDate: null,
    }
  },

  /** Applied when the subscription is on the plan and its plan line items started in the requested minute. */
  async findApplied(tx, scope, sub, input, now) {
    if (!input.plan_id || sub.plan_id !== input.plan_id) return null
    const [first] = await planLineItems(tx, scope, sub.id, sub.plan_id, new Date(0))
    if (!first || first.start_date <= sub.start_date) return null
    return sameMinute(first.start_date, requestedMinute(input, now)) ? first.start_date : null
  },

  apply(_tx, _scope, userId, plan) {
    const sub = plan.subscription
    sub.plan_id = plan.newPlanId!
    sub.synced_price_sequence = plan.newPriceSequence!
    sub.updated_by = userId
    return null
  },
}
