// POST /v1/entitlements/check. The spec names no route for it; a POST like the usage queries,
// read-only (client libraries retry read-only POSTs).
import type { FastifyInstance } from 'fastify'
import { scopeOf } from '../auth/index.js'
import type { BillingContext } from '../context.js'
import { refIdSchema } from '../http/catalog-schemas.js'
import { FEATURE_TYPES } from '../features/feature.entity.js'
import { reportedUsageSchema } from '../features/index.js'
import { checkEntitlement } from './check.js'
import { USAGE_RESET_PERIODS } from './entitlement.entity.js'
import { typed } from '../http/typed-routes.js'

const body = {
  type: 'object',
  additionalProperties: false,
  properties: {
    external_customer_id: { type: 'string', minLength: 1, maxLength: 255 },
    customer_id: refIdSchema,
    feature_id: refIdSchema,
    feature_lookup_key: { type: 'string', minLength: 1, maxLength: 255 },
  },
} as const

const str = { type: 'string' } as const
const nullableStr = { type: ['string', 'null'] } as const

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
    static_value: nullableStr,
    usage_limit: { ...nullableStr, description: 'sum of the enabled grants\' limits (decimal string); null: unlimited' },
    is_soft_limit: { type: 'boolean' },
    usage_reset_period: { type: ['string', 'null'], enum: [...USAGE_RESET_PERIODS, null] },
    period_start: { ...nullableStr, format: 'date-time' },
    period_end: { ...nullableStr, format: 'date-time' },
    usage: { ...nullableStr, description: 'usage in the current reset period (decimal string); metered features only' },
    remaining: { ...nullableStr, description: 'usage_limit - usage, never below 0; null when unlimited' },
    reported_usage: reportedUsageSchema,
    entitlement_ids: { type: 'array', items: str },
    checked_at: { type: 'string', format: 'date-time' },
  },
} as const

export async function entitlementCheckRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/entitlements/check', { schema: { tags: ['entitlements'], body, response: { 200: entitlementCheckResponse } } }, async (request) => {
    return checkEntitlement(ctx, ctx.orm.em.fork(), scopeOf(request), request.body)
  })
}
