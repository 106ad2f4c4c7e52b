// Modification change types addon_attach and addon_detach.
// - addon_attach (addon_id, optional quantity for its FIXED prices, optional end_date) records
//   an add-on association and adds the add-on's recurring prices in the subscription's currency
//   as line items carrying addon_association_id, from effective_date to end_date (or open).
//   Each line item bills on its price's own cadence (billing_period and count, aligned on the
//   subscription's anchor: cadence.ts); with create_prorations an advance fixed price gets a
//   debit for [effective_date, min(end_date, end of its cadence period)).
// - addon_detach (addon_id) cancels the active association and ends its line items at
//   effective_date, crediting the unused part of advance fixed charges up to the line item's
//   end date or its cadence period's end.
// One active association per subscription and add-on (a unique index backs it).
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import { newId } from '../../platform/ids.js'
import type { Scope } from '../db/scope.js'
import { AddonSchema } from '../addons/addon.entity.js'
import { PriceSchema } from '../plans/price.entity.js'
import { D } from '../pricing/index.js'
import { AddonAssociationSchema, type AddonAssociation } from './addon-association.entity.js'
import { assertUsageInArrear, refuseFields, requestedMinute, sameMinute, type LineSetChangeInput, type LineSetHandler } from './line-set-change.js'
import { SubscriptionLineItemSchema } from './subscription.entity.js'

const activeAssociation = (em: EntityManager, scope: Scope, subId: string, addonId: string) =>
  em.findOne(AddonAssociationSchema, { subscription_id: subId, addon_id: addonId, ...scope, addon_status: 'active', status: { $ne: 'deleted' } })

function requireAddonId(input: LineSetChangeInput): string {
  if (!input.addon_id) throw new ValidationError(`addon_id is required with ${input.change_type}`, 'addon_id')
  return input.addon_id
}

export const addonAttach: LineSetHandler = {
  target: (input) => input.addon_id ?? '',

  async plan(em, scope, sub, effective, input) {
    refuseFields(input, ['line_item_id', 'price_id', 'plan_id'])
    const addonId = requireAddonId(input)
    const addon = await em.findOne(AddonSchema, { id: addonId, ...scope, status: 'published' })
    if (!addon) throw new ValidationError(`add-on ${addonId} not found`, 'addon_id')
    const existing = await activeAssociation(em, scope, sub.id, addon.id)
    if (existing) throw new ValidationError(`add-on ${addon.id} is already attached to subscription ${sub.id} (association ${existing.id})`, 'addon_id')
    const endDate = input.end_date !== undefined ? new Date(input.end_date) : null
    if (endDate && endDate <= effective) throw new ValidationError('end_date must be after effective_date', 'end_date')
    const all = await em.find(PriceSchema, { entity_type: 'ADDON', entity_id: addon.id, ...scope, status: 'published' }, { orderBy: { sequence: 'asc' } })
    const prices = all.filter((p) => p.currency === sub.currency && p.billing_period !== 'ONETIME')
    if (!prices.length) throw new ValidationError(`add-on ${addon.id} has no recurring prices in ${sub.currency}, the subscription's currency`, 'addon_id')
    assertUsageInArrear(prices, 'addon_id')
    const quantity = D(input.quantity ?? '1')
    if (quantity.lte(0)) throw new ValidationError('quantity must be greater than 0', 'quantity')
    const taken = await em.findOne(SubscriptionLineItemSchema, {
      subscription_id: sub.id, ...scope, price_id: { $in: prices.map((p) => p.id) }, status: 'published', $or: [{ end_date: null }, { end_date: { $gt: effective } }],
    })
    if (taken) throw new ValidationError(`price ${taken.price_id} of add-on ${addon.id} is already on subscription ${sub.id} (line item ${taken.id})`, 'addon_id')
    return {
      ended: [],
      // usage prices are measured, so their quantity stays 1
      added: prices.map((price) => ({
        price, quantity: price.type === 'FIXED' ? quantity.toString() : '1', display_name: price.display_name ?? addon.name, end_date: endDate,
      })),
      oldPlanId: null, newPlanId: null, newPriceSequence: null, addonId: addon.id, associationId: null, addonEndDate: endDate,
    }
  },

  async findApplied(tx, scope, sub, input, now) {
    if (!input.addon_id) return null
    const assoc = await activeAssociation(tx, scope, sub.id, input.addon_id)
    return assoc && sameMinute(assoc.start_date, requestedMinute(input, now)) ? assoc.start_date : null
  },

  apply(tx, scope, userId, plan) {
    return tx.create(AddonAssociationSchema, {
      id: newId('addon_assoc'), ...scope, subscription_id: plan.subscription.id, addon_id: plan.addonId!, start_date: plan.effective,
      end_date: plan.addonEndDate, addon_status: 'active', cancelled_at: null, status: 'published', metadata: {}, created_by: userId, updated_by: userId,
    }).id
  },
}

export const addonDetach: LineSetHandler = {
  target: (input) => input.addon_id ?? '',

  async plan(em, scope, sub, effective, input) {
    refuseFields(input, ['line_item_id', 'price_id', 'plan_id', 'quantity', 'end_date'])
    const addonId = requireAddonId(input)
    const assoc = await activeAssociation(em, scope, sub.id, addonId)
    if (!assoc) throw new ValidationError(`add-on ${addonId} is not attached to subscription ${sub.id}`, 'addon_id')
    if (effective <= assoc.start_date) throw new ValidationError(`effective_date must be after the attachment's start ${assoc.start_date.toISOString()}`, 'effective_date')
    if (assoc.end_date && assoc.end_date <= effective) throw new ValidationError(`the attachment of add-on ${addonId} ends at ${assoc.end_date.toISOString()}, before effective_date`, 'effective_date')
    const ended = await em.find(SubscriptionLineItemSchema, { subscription_id: sub.id, ...scope, addon_association_id: assoc.id, status: 'published' }, { orderBy: { created_at: 'asc', id: 'asc' } })
    return { ended, added: [], oldPlanId: null, newPlanId: null, newPriceSequence: null, addonId, associationId: assoc.id, addonEndDate: null }
  },

  /** Applied when the latest association of the add-on was cancelled at the requested minute and none is active. */
  async findApplied(tx, scope, sub, input, now) {
    if (!input.addon_id || await activeAssociation(tx, scope, sub.id, input.addon_id)) return null
    const last: AddonAssociation | null = await tx.findOne(
      AddonAssociationSchema, { subscription_id: sub.id, addon_id: input.addon_id, ...scope, addon_status: 'cancelled' }, { orderBy: { cancelled_at: 'desc' } },
    )
    return last?.end_date && sameMinute(last.end_date, requestedMinute(input, now)) ? last.end_date : null
  },

  apply(tx, scope, userId, plan, now) {
    const assoc = tx.getReference(AddonAssociationSchema, plan.associationId!)
    tx.assign(assoc, { addon_status: 'cancelled', cancelled_at: now, end_date: plan.effective, updated_by: userId })
    return null
  },
}
