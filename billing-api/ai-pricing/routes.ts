// POST /ai/pricing/parse (spec: a natural-language pricing description in, structured plan,
// price, meter and entitlement configurations out; nothing is saved).
import type { FastifyInstance } from 'fastify'
import { typed } from '../http/typed-routes.js'
import type { BillingContext } from '../context.js'
import { MAX_DESCRIPTION_LENGTH } from './deterministic-parser.js'
import { parsedPricingSchema } from './parsed-pricing.js'
import { parsePricing } from './select-parser.js'
import { READS } from '../http/route-access.js'

const body = {
  type: 'object',
  required: ['description'],
  additionalProperties: false,
  properties: { description: { type: 'string', minLength: 1, maxLength: MAX_DESCRIPTION_LENGTH } },
} as const

const response = {
  200: {
    ...parsedPricingSchema,
    required: [...parsedPricingSchema.required, 'parser'],
    properties: {
      ...parsedPricingSchema.properties,
      parser: { type: 'string', enum: ['deterministic', 'openai'] },
      fallback_reason: { type: 'string' },
    },
  },
} as const

export async function aiPricingRoutes(instance: FastifyInstance, ctx: BillingContext): Promise<void> {
  const app = typed(instance)
  app.post('/ai/pricing/parse', { config: READS, schema: { tags: ['ai'], body, response } }, async (request) => {
    return parsePricing(ctx.config.pricingParser, request.body.description)
  })
}
