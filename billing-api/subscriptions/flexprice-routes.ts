// Flexprice's routes for a plan change and for attaching add-ons, served beside the spec's
// modification (POST /subscriptions/{id}/modify[/preview] with change types plan_change,
// addon_attach and addon_detach) by the same use cases; only the request and answer shapes are
// Flexprice's. A request field Flexprice sends is accepted only with the value that matches what
// the modification does, and refused with 400 otherwise.
import type { FastifyInstance } from 'fastify'
import { NotFoundError, ValidationError } from '../../platform/errors.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { iso, serializeBase } from '../db/common.js'
import type { Scope } from '../db/scope.js'
import { dateTime, idParams, listResponse, metadataSchema, paginationQuery } from '../http/schemas.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { deletedMessage, pageOf, ref } from '../http/response-schemas.js'
import { serializeInvoice } from '../invoices/index.js'
import { getPlan } from '../plans/index.js'
import { D, toMoneyString } from '../pricing/index.js'
import { AddonAssociationSchema, type AddonAssociation } from './addon-association.entity.js'
import { applyLineSetChange, previewLineSetChange, type LineSetChangeInput, type LineSetPlan } from './line-set-change.js'
import { planChange } from './plan-change.js'
import { addonAttach, addonDetach } from './addon-attach.js'
import { addonAssociationSchema, subscriptionChangeExecuteSchema, subscriptionChangePreviewSchema } from './response-schemas.js'
import { getSubscription } from './service.js'
import type { Subscription } from './subscription.entity.js'
import { PRORATION_BEHAVIORS } from './modify.js'

const id = { type: 'string', minLength: 1, maxLength: 100 } as const

const changeBody = {
  type: 'object',
  required: ['target_plan_id', 'proration_behavior', 'billing_cadence', 'billing_cycle', 'billing_period'],
  additionalProperties: false,
  properties: {
    target_plan_id: id,
    proration_behavior: { type: 'string', enum: PRORATION_BEHAVIORS },
    billing_cadence: { type: 'string', enum: ['RECURRING'] },
    billing_cycle: { type: 'string', enum: ['anniversary', 'calendar'] },
    billing_period: { type: 'string', minLength: 1, maxLength: 20 },
    billing_period_count: { type: 'integer', minimum: 1 },
    change_at: { type: 'string', enum: ['immediate'] },
    metadata: metadataSchema,
  },
} as const

interface ChangeBody {
  target_plan_id: string
  proration_behavior: LineSetChangeInput['proration_behavior']
  billing_cadence: 'RECURRING'
  billing_cycle: 'anniversary' | 'calendar'
  billing_period: string
  billing_period_count?: number
  change_at?: 'immediate'
  metadata?: Record<string, string>
}

const addBody = {
  type: 'object',
  required: ['subscription_id', 'addon_id'],
  additionalProperties: false,
  properties: { subscription_id: id, addon_id: id, start_date: dateTime, metadata: metadataSchema },
} as const

const pageQuery = { type: 'object', additionalProperties: false, properties: { ...paginationQuery } } as const

const removeBody = {
  type: 'object',
  required: ['addon_association_id'],
  additionalProperties: false,
  properties: { addon_association_id: id, reason: { type: 'string', maxLength: 1000 } },
} as const

/**
 * A plan change keeps the subscription's billing: its cadence, cycle and period are sent by
 * Flexprice's SDK and must be the subscription's (a change of billing period is not a plan change
 * here). The change takes effect now (`change_at` immediate).
 */
function planChangeInput(sub: Subscription, body: ChangeBody): LineSetChangeInput {
  if (body.billing_cycle !== sub.billing_cycle) throw new ValidationError(`billing_cycle must be the subscription's (${sub.billing_cycle}): a plan change keeps the billing cycle`, 'billing_cycle')
  if (body.billing_period !== sub.billing_period) throw new ValidationError(`billing_period must be the subscription's (${sub.billing_period}): a plan change keeps the billing period`, 'billing_period')
  if (body.billing_period_count !== undefined && body.billing_period_count !== sub.billing_period_count) {
    throw new ValidationError(`billing_period_count must be the subscription's (${sub.billing_period_count})`, 'billing_period_count')
  }
  if (body.metadata !== undefined) throw new ValidationError('metadata is not kept on a plan change; set it on the subscription', 'metadata')
  return { change_type: 'plan_change', plan_id: body.target_plan_id, proration_behavior: body.proration_behavior }
}

const DAY = 86_400_000

/** The proration of a line-set change in Flexprice's terms: debits are charges, credits are negative lines. */
function prorationDetails(p: LineSetPlan) {
  const s = p.subscription
  const amounts = p.lines.map((l) => D(l.amount))
  const charge = amounts.filter((a) => a.gt(0)).reduce((a, b) => a.plus(b), D(0))
  const credit = amounts.filter((a) => a.lt(0)).reduce((a, b) => a.plus(b), D(0)).abs()
  return {
    charge_amount: toMoneyString(charge, s.currency),
    credit_amount: toMoneyString(credit, s.currency),
    net_amount: toMoneyString(p.total, s.currency),
    charge_description: null,
    credit_description: null,
    currency: s.currency,
    current_period_start: iso(s.current_period_start),
    current_period_end: iso(s.current_period_end),
    days_used: Math.floor((p.effective.getTime() - s.current_period_start.getTime()) / DAY),
    days_remaining: Math.ceil((s.current_period_end.getTime() - p.effective.getTime()) / DAY),
    proration_date: iso(p.effective),
  }
}

/** upgrade, downgrade or lateral: by what the change costs for the rest of the period */
const changeType = (p: LineSetPlan) => D(p.total).gt(0) ? 'upgrade' : D(p.total).lt(0) ? 'downgrade' : 'lateral'

async function planSummary(ctx: BillingContext, scope: Scope, planId: string | null) {
  if (!planId) return null
  const { plan } = await getPlan(ctx.orm.em.fork(), scope, planId)
  return { id: plan.id, name: plan.name, lookup_key: plan.lookup_key ?? null, description: plan.description ?? null }
}

const subscriptionSummary = (s: Subscription, planId: string) => ({
  id: s.id, plan_id: planId, status: s.subscription_status, billing_anchor: iso(s.billing_anchor), created_at: iso(s.created_at),
  current_period_start: iso(s.current_period_start), current_period_end: iso(s.current_period_end), archived_at: null,
})

function serializeAssociation(a: AddonAssociation) {
  return {
    ...serializeBase(a),
    addon_id: a.addon_id, entity_id: a.subscription_id, entity_type: 'subscription', addon_status: a.addon_status,
    start_date: iso(a.start_date), end_date: iso(a.end_date), cancelled_at: iso(a.cancelled_at), cancellation_reason: null,
    addon: null, subscription: null,
  }
}

export async function flexpriceSubscriptionRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  const tags = ['subscriptions']
  const em = () => ctx.orm.em.fork()

  app.post('/subscriptions/:id/change/preview', { config: READS, schema: { response: { 200: subscriptionChangePreviewSchema }, tags, params: idParams, body: changeBody } }, async (request) => {
    const scope = scopeOf(request)
    const { subscription: sub } = await getSubscription(em(), scope, request.params.id)
    const p = await previewLineSetChange(ctx, scope, sub.id, planChangeInput(sub, request.body as ChangeBody), planChange)
    return {
      subscription_id: sub.id, change_type: changeType(p), effective_date: iso(p.effective),
      current_plan: await planSummary(ctx, scope, p.oldPlanId), target_plan: await planSummary(ctx, scope, p.newPlanId),
      proration_details: prorationDetails(p),
      next_invoice_preview: {
        currency: sub.currency, subtotal: toMoneyString(p.total, sub.currency), tax_amount: null, total: toMoneyString(p.total, sub.currency), due_date: null,
        line_items: p.lines.map((l) => ({
          description: l.display_name, price_id: l.price_id, quantity: l.quantity, unit_price: null, amount: l.amount, is_proration: true,
          period_start: iso(l.period_start), period_end: iso(l.period_end),
        })),
      },
      new_billing_cycle: null, metadata: null, warnings: [],
    }
  })

  app.post('/subscriptions/:id/change/execute', { schema: { response: { 200: subscriptionChangeExecuteSchema }, tags, params: idParams, body: changeBody } }, async (request) => {
    const scope = scopeOf(request)
    const { subscription: before } = await getSubscription(em(), scope, request.params.id)
    const input = planChangeInput(before, request.body as ChangeBody)
    const p = await previewLineSetChange(ctx, scope, before.id, input, planChange)
    const applied = await applyLineSetChange(ctx, scope, request.auth.userId, before.id, input, planChange)
    return {
      change_type: changeType(p), effective_date: iso(p.effective), is_scheduled: false, schedule_id: null, scheduled_at: null,
      old_subscription: subscriptionSummary(before, p.oldPlanId ?? before.plan_id),
      new_subscription: subscriptionSummary(applied.subscription, applied.subscription.plan_id),
      invoice: applied.invoice ? serializeInvoice(applied.invoice.invoice, applied.invoice.lines) : null,
      proration_applied: prorationDetails(p), credit_grants: null, metadata: null,
    }
  })

  app.post('/subscriptions/addon', { schema: { response: { 200: addonAssociationSchema }, tags, body: addBody } }, async (request) => {
    const scope = scopeOf(request)
    const { subscription_id, addon_id, start_date, metadata } = request.body
    if (metadata !== undefined) throw new ValidationError('metadata is not kept on an add-on attachment', 'metadata')
    const applied = await applyLineSetChange(ctx, scope, request.auth.userId, subscription_id, { change_type: 'addon_attach', addon_id, effective_date: start_date }, addonAttach)
    const association = await em().findOne(AddonAssociationSchema, { ...scope, subscription_id: applied.subscription.id, addon_id, addon_status: 'active' })
    if (!association) throw new NotFoundError('add-on association of', addon_id)
    return serializeAssociation(association)
  })

  // The add-ons attached now, oldest first: a list, so `{items, pagination}` as every list of the
  // spec (Flexprice's SDK reads a bare array).
  app.get('/subscriptions/:id/addons/associations', { schema: { response: { 200: pageOf(ref('AddonAssociation')) }, tags, params: idParams, querystring: pageQuery } }, async (request) => {
    const scope = scopeOf(request)
    const { subscription: sub } = await getSubscription(em(), scope, request.params.id)
    const { limit, offset } = request.query
    const [active, total] = await em().findAndCount(AddonAssociationSchema, { ...scope, subscription_id: sub.id, addon_status: 'active', status: { $ne: 'deleted' } }, { orderBy: { start_date: 'asc', id: 'asc' }, limit, offset })
    return listResponse(active.map(serializeAssociation), total, { limit, offset })
  })

  app.delete('/subscriptions/addon', { schema: { response: { 200: deletedMessage }, tags, body: removeBody } }, async (request) => {
    const scope = scopeOf(request)
    const { addon_association_id: associationId, reason } = request.body
    if (reason !== undefined) throw new ValidationError('reason is not kept on an add-on detachment', 'reason')
    const association = await em().findOne(AddonAssociationSchema, { ...scope, id: associationId, status: { $ne: 'deleted' } })
    if (!association) throw new NotFoundError('add-on association', associationId)
    await applyLineSetChange(ctx, scope, request.auth.userId, association.subscription_id, { change_type: 'addon_detach', addon_id: association.addon_id }, addonDetach)
    return { message: `${associationId} detached` }
  })
}

