// What POST /ai/pricing/parse answers: configurations in the shapes the catalog routes take
// (plan, price inputs, meters, features, entitlements), cross-referenced by `key` because
// nothing is saved and so nothing has an id yet. One JSON schema serves as the route's
// response schema and as the check an LLM's answer must pass.
import { nonNegativeDecimalString } from '../http/schemas.js'
import { BILLING_PERIODS, type BillingPeriod } from '../periods/periods.js'
import { USAGE_RESET_PERIODS, type UsageResetPeriod } from '../entitlements/entitlement.entity.js'

export interface ParsedTier {
  up_to: number | null
  unit_amount: string
}

export interface ParsedPrice {
  type: 'FIXED' | 'USAGE'
  billing_model: 'FLAT_FEE' | 'PACKAGE' | 'TIERED'
  tier_mode?: 'VOLUME' | 'SLAB'
  currency: string
  amount?: string
  tiers?: ParsedTier[]
  transform_quantity?: { divide_by: number; round: 'up' }
  billing_period: BillingPeriod
  billing_period_count: number
  invoice_cadence: 'ADVANCE' | 'ARREAR'
  trial_period_days?: number
  display_name: string
  /** USAGE prices: the `key` of the meter in `meters` (becomes meter_id once the meter exists) */
  meter_key?: string
}

export interface ParsedMeter {
  key: string
  name: string
  event_name: string
  aggregation: { type: 'COUNT' | 'SUM'; field?: string }
}

export interface ParsedFeature {
  key: string
  name: string
  lookup_key: string
  type: 'metered' | 'boolean'
  meter_key?: string
  unit_singular?: string
  unit_plural?: string
}

export interface ParsedEntitlement {
  feature_key: string
  is_enabled: boolean
  usage_limit: number | null
  is_soft_limit: boolean
  usage_reset_period: UsageResetPeriod | null
}

export interface ParsedPricing {
  plan: { name: string; lookup_key: string; description: string }
  prices: ParsedPrice[]
  meters: ParsedMeter[]
  features: ParsedFeature[]
  entitlements: ParsedEntitlement[]
  /** assumptions the parser made (e.g. a currency it assumed) */
  warnings: string[]
}

const key = { type: 'string', minLength: 1, maxLength: 100, pattern: '^[a-z0-9_]+$' } as const
const name = { type: 'string', minLength: 1, maxLength: 255 } as const

const tierSchema = {
  type: 'object',
  required: ['up_to', 'unit_amount'],
  additionalProperties: false,
  properties: { up_to: { type: ['integer', 'null'], minimum: 1 }, unit_amount: nonNegativeDecimalString },
} as const

export const parsedPriceSchema = {
  type: 'object',
  required: ['type', 'billing_model', 'currency', 'billing_period', 'billing_period_count', 'invoice_cadence', 'display_name'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['FIXED', 'USAGE'] },
    billing_model: { type: 'string', enum: ['FLAT_FEE', 'PACKAGE', 'TIERED'] },
    tier_mode: { type: 'string', enum: ['VOLUME', 'SLAB'] },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    amount: nonNegativeDecimalString,
    tiers: { type: 'array', minItems: 1, maxItems: 50, items: tierSchema },
    transform_quantity: {
      type: 'object',
      required: ['divide_by', 'round'],
      additionalProperties: false,
      properties: { divide_by: { type: 'integer', minimum: 1 }, round: { type: 'string', enum: ['up'] } },
    },
    billing_period: { type: 'string', enum: BILLING_PERIODS },
    billing_period_count: { type: 'integer', minimum: 1, maximum: 120 },
    invoice_cadence: { type: 'string', enum: ['ADVANCE', 'ARREAR'] },
    trial_period_days: { type: 'integer', minimum: 0, maximum: 3650 },
    display_name: name,
    meter_key: key,
  },
} as const

export const parsedPricingSchema = {
  type: 'object',
  required: ['plan', 'prices', 'meters', 'features', 'entitlements', 'warnings'],
  additionalProperties: false,
  properties: {
    plan: {
      type: 'object',
      required: ['name', 'lookup_key', 'description'],
      additionalProperties: false,
      properties: { name, lookup_key: { type: 'string', minLength: 1, maxLength: 255 }, description: { type: 'string', maxLength: 2000 } },
    },
    prices: { type: 'array', maxItems: 50, items: parsedPriceSchema },
    meters: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        required: ['key', 'name', 'event_name', 'aggregation'],
        additionalProperties: false,
        properties: {
          key,
          name,
          event_name: name,
          aggregation: {
            type: 'object',
            required: ['type'],
            additionalProperties: false,
            properties: { type: { type: 'string', enum: ['COUNT', 'SUM'] }, field: name },
          },
        },
      },
    },
    features: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        required: ['key', 'name', 'lookup_key', 'type'],
        additionalProperties: false,
        properties: {
          key,
          name,
          lookup_key: name,
          type: { type: 'string', enum: ['metered', 'boolean'] },
          meter_key: key,
          unit_singular: name,
          unit_plural: name,
        },
      },
    },
    entitlements: {
      type: 'array',
      maxItems: 50,
      items: {
        type: 'object',
        required: ['feature_key', 'is_enabled', 'usage_limit', 'is_soft_limit', 'usage_reset_period'],
        additionalProperties: false,
        properties: {
          feature_key: key,
          is_enabled: { type: 'boolean' },
          usage_limit: { type: ['integer', 'null'], minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
          is_soft_limit: { type: 'boolean' },
          usage_reset_period: { type: ['string', 'null'], enum: [...USAGE_RESET_PERIODS, null] },
        },
      },
    },
    warnings: { type: 'array', maxItems: 50, items: { type: 'string', maxLength: 500 } },
  },
} as const
