// Live access routes: the entitlement check (one feature, or many for one customer), the live
// wallet balance and the usage summary. POSTs are read-only like the usage queries.
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { refIdSchema } from '../http/catalog-schemas.js'
import { idParams } from '../http/schemas.js'
import { typed } from '../http/typed-routes.js'
import { FEATURE_TYPES } from '../features/feature.entity.js'
import { reportedUsageSchema } from '../features/index.js'
import { USAGE_RESET_PERIODS } from '../entitlements/entitlement.entity.js'
import { liveBalances } from './balance.js'
import { checkEntitlement, checkEntitlements } from './check.js'
import { liveAccess } from './live-access.js'
import { usageSummary } from './usage-summary.js'
import { D } from '../pricing/index.js'
import { READS } from '../http/route-access.js'
import { money, str, stringOrNull } from '../http/response-schemas.js'

const customerRef = {
  external_customer_id: { type: 'string', minLength: 1, maxLength: 255 },
  customer_id: refIdSchema,
} as const
const featureRef = {
  feature_id: refIdSchema,
  feature_lookup_key: { type: 'string', minLength: 1, maxLength: 255 },
} as const

const checkBody = { type: 'object', additionalProperties: false, properties: { ...customerRef, ...featureRef } } as const
const batchBody = {
  type: 'object',
  additionalProperties: false,
  required: ['features'],
  properties: {
    ...customerRef,
    features: { type: 'array', minItems: 1, maxItems: 200, items: { type: 'object', additionalProperties: false, properties: featureRef } },
  },
} as const

const usageAsOf = {
  ...stringOrNull, format: 'date-time',
  description: 'every event acknowledged by ingest before this instant is included in usage; null: not metered, or this process cannot tell',
} as const

export const entitlementCheckResponse = {
  type: 'object',
  additionalProperties: false,
  properties: {
    customer_id: str,
    external_customer_id: str,
    feature_id: str,
    feature_lookup_key: str,
    feature_type: { type: 'string', enum: FEATURE_TYPES },
    is_enabled: { type: 'boolean' },
    has_access: { type: 'boolean' },
    static_value: stringOrNull,
    usage_limit: { ...stringOrNull, description: 'sum of the enabled grants\' limits (decimal string); null: unlimited' },
    is_soft_limit: { type: 'boolean' },
    usage_reset_period: { type: ['string', 'null'], enum: [...USAGE_RESET_PERIODS, null] },
    period_start: { ...stringOrNull, format: 'date-time' },
    period_end: { ...stringOrNull, format: 'date-time' },
    usage: { ...stringOrNull, description: 'usage in the current reset period (decimal string); metered features only' },
    remaining: { ...stringOrNull, description: 'usage_limit - usage, never below 0; null when unlimited' },
    reported_usage: reportedUsageSchema,
    usage_as_of: usageAsOf,
    entitlement_ids: { type: 'array', items: str },
    checked_at: { type: 'string', format: 'date-time' },
  },
} as const

const liveBalanceResponse = {
  type: 'object',
  additionalProperties: false,
  properties: {
    customer_id: str,
    external_customer_id: str,
    wallets: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          wallet_id: str, wallet_type: str, currency: str,
          credits: { type: 'string', description: 'the wallet\'s credits (decimal string)' },
          balance: { ...money, description: 'what the credits are worth in the currency, rounded down to its minor unit' },
          unbilled_usage: { ...money, description: 'usage charges of the current billing periods not yet invoiced, in the currency' },
          live_balance: { ...money, description: 'balance - unbilled_usage; may be negative' },
        },
      },
    },
    usage_as_of: usageAsOf,
    as_of: { type: 'string', format: 'date-time' },
  },
} as const

const projectedInvoice = {
  type: 'object',
  additionalProperties: false,
  properties: {
    subscription_id: str, currency: str,
    period_start: { type: 'string', format: 'date-time' }, period_end: { type: 'string', format: 'date-time' },
    amount: { ...money, description: 'the period invoice so far: subtotal - discounts (taxes and credits come at finalization)' },
    usage_amount: { ...money, description: 'of which usage charges' },
  },
} as const

const usageSummaryResponse = {
  type: 'object',
  additionalProperties: false,
  properties: {
    customer_id: str,
    external_customer_id: str,
    features: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          feature_id: str, feature_lookup_key: str, feature_type: { type: 'string', enum: FEATURE_TYPES },
          is_enabled: { type: 'boolean' }, has_access: { type: 'boolean' }, usage_limit: stringOrNull, is_soft_limit: { type: 'boolean' },
          usage: stringOrNull, remaining: stringOrNull, period_start: { ...stringOrNull, format: 'date-time' },
          period_end: { ...stringOrNull, format: 'date-time' }, usage_reset_period: { type: ['string', 'null'], enum: [...USAGE_RESET_PERIODS, null] },
        },
      },
    },
    invoices: { type: 'array', items: projectedInvoice },
    projected_amounts: { type: 'array', items: { type: 'object', additionalProperties: false, properties: { currency: str, amount: money } } },
    usage_as_of: usageAsOf,
    as_of: { type: 'string', format: 'date-time' },
  },
} as const

const customerUsageResponse = {
  type: 'object',
  additionalProperties: false,
  required: ['customer_id', 'features', 'period', 'pagination'],
  properties: {
    customer_id: str,
    features: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        properties: {
          feature_id: str, feature_lookup_key: str, feature: { type: 'null' }, sources: { type: 'null' },
          is_enabled: { type: 'boolean' }, is_soft_limit: { type: 'boolean' }, is_unlimited: { type: 'boolean' },
          current_usage: stringOrNull, total_limit: { type: ['integer', 'null'] }, usage_percent: stringOrNull,
          next_usage_reset_at: { ...stringOrNull, format: 'date-time' },
        },
      },
    },
    period: { type: 'null' },
    pagination: { type: 'object', additionalProperties: false, properties: { limit: { type: 'integer' }, offset: { type: 'integer' }, total: { type: 'integer' } } },
  },
} as const

export async function liveRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/entitlements/check', {
    config: READS,
    schema: { tags: ['entitlements'], summary: 'Check one feature for a customer (from memory)', body: checkBody, response: { 200: entitlementCheckResponse } },
  }, async (request) => checkEntitlement(ctx, liveAccess(ctx), scopeOf(request), request.body))

  app.post('/entitlements/check/batch', {
    config: READS,
    schema: {
      tags: ['entitlements'], summary: 'Check many features for one customer', body: batchBody,
      response: { 200: { type: 'object', additionalProperties: false, properties: { checks: { type: 'array', items: entitlementCheckResponse } } } },
    },
  }, async (request) => checkEntitlements(ctx, liveAccess(ctx), scopeOf(request), request.body))

  app.get('/customers/:id/live-balance', {
    schema: { tags: ['wallets'], summary: 'Wallet balances minus the unbilled usage of the current periods', params: idParams, response: { 200: liveBalanceResponse } },
  }, async (request) => {
    const live = liveAccess(ctx)
    const scope = scopeOf(request)
    const h = await live.catalog.holdings(scope, { customer_id: request.params.id })
    const at = ctx.clock.now()
    const { wallets, asOf } = await liveBalances(ctx, live.counters, ctx.orm.em.fork(), scope, h, at)
    return {
      customer_id: h.customer.id, external_customer_id: h.customer.external_id, wallets,
      usage_as_of: asOf === null ? null : new Date(asOf).toISOString(), as_of: at.toISOString(),
    }
  })

  // Flexprice's path and shape of the same summary's features: total_limit is the usage limit
  // (an integer, spec: Entitlement), usage_percent the usage's share of it, next_usage_reset_at
  // the end of the usage period; the feature and its sources are not expanded (null).
  app.get('/customers/usage', {
    schema: {
      tags: ['customers'], summary: 'A customer\'s features with their usage and limits (Flexprice\'s shape)',
      querystring: { type: 'object', required: ['customer_id'], additionalProperties: false, properties: { customer_id: refIdSchema } },
      response: { 200: customerUsageResponse },
    },
  }, async (request) => {
    const summary = await usageSummary(ctx, liveAccess(ctx), scopeOf(request), request.query.customer_id)
    const features = summary.features.map((f) => ({
      feature_id: f.feature_id, feature_lookup_key: f.feature_lookup_key, feature: null, sources: null,
      is_enabled: f.is_enabled, is_soft_limit: f.is_soft_limit, is_unlimited: f.usage_limit === null,
      current_usage: f.usage, total_limit: f.usage_limit === null ? null : Number(f.usage_limit),
      usage_percent: f.usage === null || f.usage_limit === null || D(f.usage_limit).isZero() ? null : D(f.usage).div(f.usage_limit).times(100).toDecimalPlaces(2).toFixed(2),
      next_usage_reset_at: f.period_end,
    }))
    return { customer_id: summary.customer_id, features, period: null, pagination: { limit: features.length, offset: 0, total: features.length } }
  })

  app.get('/customers/:id/usage-summary', {
    schema: { tags: ['customers'], summary: 'Usage, limits and the projected invoice of the current period', params: idParams, response: { 200: usageSummaryResponse } },
  }, async (request) => usageSummary(ctx, liveAccess(ctx), scopeOf(request), request.params.id))
}
