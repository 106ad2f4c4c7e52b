// HTTP side of the line-set modifications (plan_change, addon_attach, addon_detach): the
// modify routes in change-routes.ts hand these change types here.
import type { Scope } from '../db/scope.js'
import type { BillingContext } from '../context.js'
import { iso } from '../db/common.js'
import { addonAttach, addonDetach } from './addon-attach.js'
import { priceCadence } from '../periods/cadence.js'
import { applyLineSetChange, previewLineSetChange, type LineSetChangeInput, type LineSetHandler, type LineSetPlan } from './line-set-change.js'
import type { AppliedModification } from './modify.js'
import { planChange } from './plan-change.js'

const HANDLERS: Record<LineSetChangeInput['change_type'], LineSetHandler> = { plan_change: planChange, addon_attach: addonAttach, addon_detach: addonDetach }

/** Request fields the line-set change types add to the modify body. */
export const lineSetBodyProperties = {
  plan_id: { type: 'string', minLength: 1, maxLength: 100 },
  addon_id: { type: 'string', minLength: 1, maxLength: 100 },
  end_date: { type: 'string', format: 'date-time' },
} as const

export function serializeLineSetPlan(p: LineSetPlan) {
  const s = p.subscription
  return {
    subscription_id: s.id, change_type: p.changeType, effective_date: iso(p.effective), proration_behavior: p.prorationBehavior,
    old_plan_id: p.oldPlanId, new_plan_id: p.newPlanId, addon_id: p.addonId, addon_association_id: p.associationId, end_date: iso(p.addonEndDate),
    ended_line_item_ids: p.ended.map((l) => l.id),
    new_line_items: p.added.map((nl) => ({
      price_id: nl.price.id, display_name: nl.display_name, quantity: nl.quantity, start_date: iso(p.effective), end_date: iso(nl.end_date),
      billing_period: priceCadence(nl.price)?.period ?? null, billing_period_count: nl.price.billing_period_count,
    })),
    invoice_preview: {
      subscription_id: s.id, customer_id: s.customer_id, currency: s.currency, billing_reason: 'PRORATION',
      period_start: iso(p.effective), period_end: iso(s.current_period_end), subtotal: p.total, total: p.total,
      line_items: p.lines.map((l) => ({
        subscription_line_item_id: l.subscription_line_item_id, price_id: l.price_id, price_type: 'FIXED', display_name: l.display_name,
        quantity: l.quantity, amount: l.amount, period_start: iso(l.period_start), period_end: iso(l.period_end),
      })),
    },
  }
}

export const previewLineSet = async (ctx: BillingContext, scope: Scope, id: string, input: LineSetChangeInput) =>
  serializeLineSetPlan(await previewLineSetChange(ctx, scope, id, input, HANDLERS[input.change_type]))

export const applyLineSet = (ctx: BillingContext, scope: Scope, userId: string, id: string, input: LineSetChangeInput): Promise<AppliedModification> =>
  applyLineSetChange(ctx, scope, userId, id, input, HANDLERS[input.change_type])
