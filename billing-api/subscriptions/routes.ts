import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ValidationError } from '../../platform/errors.js'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { iso, serializeBase } from '../db/common.js'
import { dateTime, decimalString, idParams, listResponse, metadataSchema, nonNegativeDecimalString, paginationQuery } from '../http/schemas.js'
import { BILLING_PERIODS } from '../periods/periods.js'
import { activateSubscription } from './activate.js'
import { hierarchyCreateProperties } from './hierarchy-schemas.js'
import { cancelSubscription } from './cancel.js'
import { CANCELLATION_TYPE_ALIASES } from './cancel-strategies.js'
import { overrideLineItemSchema, serializeLineCommitment } from './commitments.js'
import { createSubscription, getSubscription, listSubscriptions, planPricesOutOfSync, updateSubscription } from './service.js'
import { CANCELLATION_TYPES, COLLECTION_METHODS, SUBSCRIPTION_STATUSES, SUBSCRIPTION_TYPES, type Subscription, type SubscriptionLineItem } from './subscription.entity.js'
import { typed } from '../http/typed-routes.js'
import { READS } from '../http/route-access.js'
import { SubscriptionPhaseSchema, serializePhase } from '../subscription-phases/phase.entity.js'
import type { EntityManager } from '@mikro-orm/postgresql'
import type { Scope } from '../db/scope.js'
import { pageOf, ref } from '../http/response-schemas.js'

export function serializeLineItem(li: SubscriptionLineItem) {
  return {
    ...serializeBase(li), subscription_id: li.subscription_id, customer_id: li.customer_id, price_id: li.price_id,
    meter_id: li.meter_id, currency: li.currency, display_name: li.display_name, quantity: li.quantity,
    start_date: iso(li.start_date), end_date: iso(li.end_date), ...serializeLineCommitment(li),
    addon_association_id: li.addon_association_id ?? null,
    subscription_phase_id: li.subscription_phase_id ?? null,
    price: null, price_type: null, price_unit: null, price_unit_id: null, billing_period: null, billing_period_count: null,
    invoice_cadence: null, trial_period: null, entity_id: null, entity_type: null, meter_display_name: null,
    plan_display_name: null, commitment_type: null, commitment_duration: null,
  }
}

export function serializeSubscription(s: Subscription, lineItems?: SubscriptionLineItem[]) {
  return {
    ...serializeBase(s),
    customer_id: s.customer_id, invoicing_customer_id: s.invoicing_customer_id, plan_id: s.plan_id, currency: s.currency,
    subscription_status: s.subscription_status, subscription_type: s.subscription_type, parent_subscription_id: s.parent_subscription_id,
    lookup_key: s.lookup_key, billing_cadence: 'RECURRING', billing_period: s.billing_period, billing_period_count: s.billing_period_count,
    billing_cycle: s.billing_cycle, billing_anchor: iso(s.billing_anchor), start_date: iso(s.start_date), end_date: iso(s.end_date),
    current_period_start: iso(s.current_period_start), current_period_end: iso(s.current_period_end),
    trial_start: iso(s.trial_start), trial_end: iso(s.trial_end),
    cancel_at: iso(s.cancel_at), cancelled_at: iso(s.cancelled_at), cancel_at_period_end: s.cancel_at_period_end,
    cancellation_type: s.cancellation_type, collection_method: s.collection_method, payment_behavior: s.payment_behavior,
    auto_invoice_threshold: s.auto_invoice_threshold, commitment_amount: s.commitment_amount, overage_factor: s.overage_factor,
    enable_true_up: s.enable_true_up, synced_price_sequence: s.synced_price_sequence, version: s.version,
    line_items: lineItems ? lineItems.map(serializeLineItem) : null, phases: null as ReturnType<typeof serializePhase>[] | null,
    customer: null, plan: null, coupon_associations: null, credit_grants: null, latest_invoice: null, pauses: null,
    active_pause_id: null, pause_status: null, customer_timezone: null, gateway_payment_method_id: null, payment_terms: null,
    commitment_duration: null, proration_behavior: null,
  }
}

/** Spec: Subscription.phases, the schedule (billing-api/subscription-phases). */
async function phasesOf(em: EntityManager, scope: Scope, subscriptionId: string) {
  const phases = await em.find(SubscriptionPhaseSchema, { ...scope, subscription_id: subscriptionId, status: 'published' }, { orderBy: { start_date: 'asc' } })
  return phases.map(serializePhase)
}

const lookupKey = { type: ['string', 'null'], minLength: 1, maxLength: 255 } as const
const threshold = { anyOf: [decimalString, { type: 'null' }] } as const

export async function subscriptionRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post(
    '/subscriptions',
    {
      schema: {
        response: { 201: ref('Subscription') },
        tags: ['subscriptions'],
        body: {
          type: 'object',
          // hierarchy: an INHERITED child (parent_subscription_id) takes the parent's plan and currency
          anyOf: [{ required: ['plan_id', 'currency'] }, { required: ['parent_subscription_id'] }],
          additionalProperties: false,
          properties: {
            ...hierarchyCreateProperties,
            customer_id: { type: 'string' },
            external_customer_id: { type: 'string' },
            plan_id: { type: 'string' },
            currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
            billing_period: { type: 'string', enum: BILLING_PERIODS.filter((p) => p !== 'ONETIME') },
            billing_period_count: { type: 'integer', minimum: 1, maximum: 120 },
            billing_cycle: { type: 'string', enum: ['anniversary', 'calendar'] },
            billing_cadence: { type: 'string', enum: ['RECURRING'] },
            billing_anchor: dateTime,
            start_date: dateTime,
            trial_period_days: { type: 'integer', minimum: 0, maximum: 3650 },
            trial_start: dateTime,
            trial_end: dateTime,
            collection_method: { type: 'string', enum: COLLECTION_METHODS },
            payment_behavior: { type: 'string', minLength: 1, maxLength: 100 },
            // negative values pass the schema so the use case answers with the spec's message
            auto_invoice_threshold: threshold,
            commitment_amount: { anyOf: [nonNegativeDecimalString, { type: 'null' }] },
            overage_factor: { anyOf: [nonNegativeDecimalString, { type: 'null' }] },
            enable_true_up: { type: 'boolean' },
            override_line_items: { type: 'array', maxItems: 100, items: overrideLineItemSchema },
            metadata: metadataSchema,
            lookup_key: lookupKey,
            draft: { type: 'boolean' },
            // Flexprice's spelling of draft: true; a subscription is created active otherwise
            subscription_status: { type: 'string', enum: ['draft'] },
          },
        },
      },
    },
    async (request, reply) => {
      const { billing_cadence: _cadence, subscription_status: status, ...rest } = request.body
      if (status === 'draft' && rest.draft === false) throw new ValidationError('subscription_status: draft contradicts draft false', 'subscription_status')
      const input = status === 'draft' ? { ...rest, draft: true } : rest
      const { subscription, lineItems } = await createSubscription(ctx, ctx.orm.em.fork(), scopeOf(request), request.auth.userId, input)
      return reply.code(201).send(serializeSubscription(subscription, lineItems))
    },
  )

  app.get('/subscriptions/:id', { schema: { response: { 200: ref('Subscription') }, tags: ['subscriptions'], params: idParams } }, async (request) => {
    const em = ctx.orm.em.fork()
    const { subscription, lineItems } = await getSubscription(em, scopeOf(request), request.params.id)
    return { ...serializeSubscription(subscription, lineItems), phases: await phasesOf(em, scopeOf(request), subscription.id) }
  })

  app.put(
    '/subscriptions/:id',
    {
      schema: {
        response: { 200: ref('Subscription') },
        tags: ['subscriptions'],
        params: idParams,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: {
            metadata: metadataSchema, auto_invoice_threshold: threshold, lookup_key: lookupKey, version: { type: 'integer', minimum: 1 },
            cancel_at_period_end: { type: 'boolean' },
          },
        },
      },
    },
    async (request) => {
      const { subscription, lineItems } = await updateSubscription(
        ctx.orm.em.fork(), scopeOf(request), request.auth.userId, request.params.id, request.body,
      )
      return serializeSubscription(subscription, lineItems)
    },
  )

  app.post(
    '/subscriptions/:id/cancel',
    {
      schema: {
        response: { 200: ref('Subscription') },
        tags: ['subscriptions'],
        params: idParams,
        body: {
          type: 'object',
          required: ['cancellation_type'],
          additionalProperties: false,
          properties: { cancellation_type: { type: 'string', enum: [...CANCELLATION_TYPES, ...Object.keys(CANCELLATION_TYPE_ALIASES)] }, cancel_at: dateTime, version: { type: 'integer', minimum: 1 } },
        },
      },
    },
    async (request) => {
      const { subscription, lineItems } = await cancelSubscription(
        ctx, scopeOf(request), request.auth.userId, request.params.id, request.body,
      )
      return serializeSubscription(subscription, lineItems)
    },
  )

  app.post(
    '/subscriptions/:id/activate',
    {
      schema: {
        response: { 200: ref('Subscription') },
        tags: ['subscriptions'],
        params: idParams,
        body: { type: 'object', additionalProperties: false, properties: { start_date: dateTime, version: { type: 'integer', minimum: 1 } } },
      },
    },
    async (request) => {
      const { subscription, lineItems } = await activateSubscription(
        ctx, scopeOf(request), request.auth.userId, request.params.id, request.body,
      )
      return serializeSubscription(subscription, lineItems)
    },
  )

  const page = async (request: FastifyRequest, q: SubscriptionListQuery) => {
    const [items, total] = await listSubscriptions(ctx.orm.em.fork(), scopeOf(request), q)
    return listResponse(items.map((s) => serializeSubscription(s)), total, q)
  }
  app.get('/subscriptions', { schema: { response: { 200: pageOf(ref('Subscription')) }, tags: ['subscriptions'], querystring: listQuery } }, async (request) => page(request, request.query))
  // The list's filters as a JSON body, the form Flexprice's SDK sends.
  app.post('/subscriptions/search', { config: READS, schema: { response: { 200: pageOf(ref('Subscription')) }, tags: ['subscriptions'], body: { ...listQuery, additionalProperties: false } } }, async (request) => page(request, request.body))
  app.get('/subscriptions/:id/v2', { schema: { response: { 200: ref('SubscriptionV2') }, tags: ['subscriptions'], params: idParams } }, async (request) => readV2(ctx, scopeOf(request), request.params.id))
}

const listQuery = {
  type: 'object',
  properties: {
    ...paginationQuery,
    customer_id: { type: 'string' },
    plan_id: { type: 'string' },
    // repeat the parameter for several values: ?subscription_status=DRAFT&subscription_status=TRIALING
    subscription_status: { type: 'array', items: { type: 'string', enum: SUBSCRIPTION_STATUSES } },
    subscription_type: { type: 'array', items: { type: 'string', enum: SUBSCRIPTION_TYPES } },
  },
} as const

type SubscriptionListQuery = Parameters<typeof listSubscriptions>[2]

/** The v1 read plus plan_prices_out_of_sync. */
async function readV2(ctx: BillingContext, scope: Scope, id: string) {
  const em = ctx.orm.em.fork()
  const { subscription, lineItems } = await getSubscription(em, scope, id)
  return {
    ...serializeSubscription(subscription, lineItems), phases: await phasesOf(em, scope, subscription.id),
    plan_prices_out_of_sync: await planPricesOutOfSync(em, scope, subscription),
  }
}

/** Registered under /v2 by app.ts: the v1 read plus plan_prices_out_of_sync. */
export async function subscriptionV2Routes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.get('/subscriptions/:id', { schema: { response: { 200: ref('SubscriptionV2') }, tags: ['subscriptions'], params: idParams } }, async (request) => readV2(ctx, scopeOf(request), request.params.id))
}
