// JSON schemas of the plan and price request bodies.
import { searchBodyProperties } from '../http/metadata-filter.js'
import { metadataSchema, nonNegativeDecimalString } from '../http/schemas.js'
import { BILLING_PERIODS } from '../periods/periods.js'

const tiersSchema = {
  type: 'array',
  minItems: 1,
  maxItems: 50,
  items: {
    type: 'object',
    required: ['unit_amount'],
    additionalProperties: false,
    properties: {
      up_to: { type: ['integer', 'null'], minimum: 1 },
      unit_amount: nonNegativeDecimalString,
      flat_amount: nonNegativeDecimalString,
    },
  },
} as const

const lookupKey = { type: 'string', minLength: 1, maxLength: 255 } as const
const invoiceCadence = { type: 'string', enum: ['ADVANCE', 'ARREAR'] } as const
const description = { type: 'string', maxLength: 2000 } as const
const displayName = { type: 'string', maxLength: 255 } as const

export const priceInputSchema = {
  type: 'object',
  required: ['type', 'billing_model', 'currency', 'billing_period', 'invoice_cadence'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', enum: ['FIXED', 'USAGE'] },
    billing_model: { type: 'string', enum: ['FLAT_FEE', 'PACKAGE', 'TIERED'] },
    tier_mode: { type: 'string', enum: ['VOLUME', 'SLAB'] },
    currency: { type: 'string', pattern: '^[A-Za-z]{3}$' },
    amount: nonNegativeDecimalString,
    meter_id: { type: 'string' },
    billing_period: { type: 'string', enum: BILLING_PERIODS },
    billing_period_count: { type: 'integer', minimum: 1, maximum: 120 },
    invoice_cadence: invoiceCadence,
    /** the only cadence: a one-time charge is billing_period ONETIME (spec: Price) */
    billing_cadence: { type: 'string', enum: ['RECURRING'] },
    /** FIAT: amounts in the currency; CUSTOM: in the pricing unit of price_unit_id */
    price_unit_type: { type: 'string', enum: ['FIAT', 'CUSTOM'] },
    trial_period_days: { type: 'integer', minimum: 0 },
    tiers: tiersSchema,
    transform_quantity: {
      type: 'object',
      required: ['divide_by'],
      additionalProperties: false,
      properties: { divide_by: { type: 'integer', minimum: 1 }, round: { type: 'string', enum: ['up', 'down'] } },
    },
    min_quantity: nonNegativeDecimalString,
    price_unit_id: { type: 'string', minLength: 1, maxLength: 100 },
    price_unit_amount: nonNegativeDecimalString,
    price_unit_tiers: tiersSchema,
    lookup_key: lookupKey,
    description,
    display_name: displayName,
    metadata: metadataSchema,
  },
} as const

/** POST /prices: a price input plus the plan it belongs to (add-ons do not exist yet). */
export const createPriceBody = {
  ...priceInputSchema,
  required: [...priceInputSchema.required, 'entity_type', 'entity_id'],
  properties: {
    ...priceInputSchema.properties,
    entity_type: { type: 'string', enum: ['PLAN'] },
    entity_id: { type: 'string', minLength: 1, maxLength: 100 },
  },
} as const

export const updatePriceBody = {
  type: 'object',
  additionalProperties: false,
  properties: { display_name: displayName, description, lookup_key: lookupKey, invoice_cadence: invoiceCadence, metadata: metadataSchema },
} as const

const planFields = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  lookup_key: lookupKey,
  description,
  display_order: { type: 'integer' },
  metadata: metadataSchema,
} as const

export const createPlanBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: { ...planFields, prices: { type: 'array', maxItems: 100, items: priceInputSchema } },
} as const

export const updatePlanBody = { type: 'object', additionalProperties: false, properties: planFields } as const

export const searchPlansBody = {
  type: 'object',
  additionalProperties: false,
  properties: { ...searchBodyProperties, lookup_key: { type: 'string' } },
} as const
