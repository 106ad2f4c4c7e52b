// Commitment settings of subscriptions and their line items: request schemas, validation and
// the columns they set. The math is in pricing/commitment.ts; see pricing/README.md.
import type { EntityManager } from '@mikro-orm/postgresql'
import { ValidationError } from '../../platform/errors.js'
import type { Scope } from '../db/scope.js'
import { nonNegativeDecimalString } from '../http/schemas.js'
import { MeterSchema, type Meter } from '../meters/meter.entity.js'
import type { Price } from '../plans/price.entity.js'
import { checkTimeBuckets, D, PricingInputError, type BucketGranularity, type TimeBucket } from '../pricing/index.js'
import type { SubscriptionLineItem } from './subscription.entity.js'

export interface SubscriptionCommitmentInput {
  commitment_amount?: string | null
  overage_factor?: string | null
  enable_true_up?: boolean
}

/** overage_factor >= 1 (1 = overage at the normal price); true-up and a factor need a commitment_amount. */
export function checkSubscriptionCommitment(input: SubscriptionCommitmentInput): void {
  const amount = input.commitment_amount ?? null
  if (amount !== null && D(amount).isNegative()) throw new ValidationError('commitment_amount must be 0 or more', 'commitment_amount')
  if (input.overage_factor != null) {
    if (D(input.overage_factor).lt(1)) throw new ValidationError(`overage_factor must be 1 or more, got ${input.overage_factor}`, 'overage_factor')
    if (amount === null) throw new ValidationError('overage_factor needs a commitment_amount', 'overage_factor')
  }
  if (input.enable_true_up && amount === null) throw new ValidationError('enable_true_up needs a commitment_amount', 'enable_true_up')
}

const timeOfDay = {
  type: 'object', required: ['hour', 'minute'], additionalProperties: false,
  properties: { hour: { type: 'integer', minimum: 0, maximum: 24 }, minute: { type: 'integer', minimum: 0, maximum: 59 } },
} as const
const nullableDecimal = { anyOf: [nonNegativeDecimalString, { type: 'null' }] } as const

/** JSON schema properties of a line item's commitment (spec: SubscriptionLineItem). */
export const lineItemCommitmentProperties = {
  commitment_amount: nullableDecimal,
  commitment_quantity: nullableDecimal,
  commitment_overage_factor: nullableDecimal,
  commitment_true_up_enabled: { type: 'boolean' },
  commitment_windowed: { type: 'boolean' },
  commitment_time_buckets: {
    anyOf: [
      { type: 'array', maxItems: 1440, items: { type: 'object', required: ['start', 'end'], additionalProperties: false, properties: { start: timeOfDay, end: timeOfDay } } },
      { type: 'null' },
    ],
  },
} as const

/** `override_line_items` item on subscription create: the commitment of the line item taking price_id. */
export const overrideLineItemSchema = {
  type: 'object', required: ['price_id'], additionalProperties: false,
  properties: { price_id: { type: 'string', minLength: 1 }, ...lineItemCommitmentProperties },
} as const

export interface LineItemCommitmentInput {
  commitment_amount?: string | null
  commitment_quantity?: string | null
  commitment_overage_factor?: string | null
  commitment_true_up_enabled?: boolean
  commitment_windowed?: boolean
  commitment_time_buckets?: TimeBucket[] | null
}

export type LineItemCommitmentColumns = Required<Pick<SubscriptionLineItem,
  'commitment_amount' | 'commitment_quantity' | 'commitment_overage_factor' | 'commitment_true_up_enabled' | 'commitment_windowed' | 'price_override'>>

/** The meter's bucket size: HOUR (time buckets on whole hours, the default) or MINUTE. */
export function meterBucketGranularity(meter: Pick<Meter, 'bucket_size'> | null): BucketGranularity {
  return meter?.bucket_size === 'MINUTE' ? 'MINUTE' : 'HOUR'
}

/**
 * Validates a line item's commitment and returns the columns it sets. Rules: only USAGE prices;
 * commitment_amount or commitment_quantity, not both; commitment_overage_factor >= 1 (default 1);
 * true-up, a factor, windowed and time buckets need a commitment; time buckets need windowed and
 * must tile the day at the meter's granularity. `field` prefixes error fields.
 */
export function resolveLineCommitment(input: LineItemCommitmentInput, price: Pick<Price, 'id' | 'type'>, meter: Pick<Meter, 'bucket_size'> | null, field: string): LineItemCommitmentColumns {
  const at = (name: string) => `${field}.${name}`
  const amount = input.commitment_amount ?? null
  const quantity = input.commitment_quantity ?? null
  const factor = input.commitment_overage_factor ?? null
  const buckets = input.commitment_time_buckets ?? null
  const committed = amount !== null || quantity !== null
  if (committed && price.type !== 'USAGE') throw new ValidationError(`${field}: price ${price.id} is ${price.type}; commitments apply to USAGE prices only`, at('price_id'))
  if (amount !== null && quantity !== null) throw new ValidationError(`${field}: give commitment_amount or commitment_quantity, not both`, at('commitment_quantity'))
  if (amount !== null && D(amount).isNegative()) throw new ValidationError(`${field}: commitment_amount must be 0 or more`, at('commitment_amount'))
  if (quantity !== null && D(quantity).isNegative()) throw new ValidationError(`${field}: commitment_quantity must be 0 or more`, at('commitment_quantity'))
  if (factor !== null && D(factor).lt(1)) throw new ValidationError(`${field}: commitment_overage_factor must be 1 or more, got ${factor}`, at('commitment_overage_factor'))
  const needs = (name: string, set: boolean) => {
    if (set && !committed) throw new ValidationError(`${field}: ${name} needs commitment_amount or commitment_quantity`, at(name))
  }
  needs('commitment_overage_factor', factor !== null)
  needs('commitment_true_up_enabled', input.commitment_true_up_enabled === true)
  needs('commitment_windowed', input.commitment_windowed === true)
  if (buckets !== null) {
    needs('commitment_time_buckets', true)
    if (input.commitment_windowed !== true) throw new ValidationError(`${field}: commitment_time_buckets need commitment_windowed true`, at('commitment_time_buckets'))
    try {
      checkTimeBuckets(buckets, meterBucketGranularity(meter))
    } catch (err) {
      if (err instanceof PricingInputError) throw new ValidationError(`${at(err.field)}: ${err.message.slice(err.field.length + 2)}`, at(err.field))
      throw err
    }
  }
  return {
    commitment_amount: amount === null ? null : D(amount).toString(),
    commitment_quantity: quantity === null ? null : D(quantity).toString(),
    commitment_overage_factor: factor === null ? (committed ? '1' : null) : D(factor).toString(),
    commitment_true_up_enabled: input.commitment_true_up_enabled === true,
    commitment_windowed: input.commitment_windowed === true,
    price_override: buckets === null ? null : { commitment_time_buckets: buckets.map((b) => ({ start: { ...b.start }, end: { ...b.end } })) },
  }
}

/** Wire form of a line item's commitment (spec: SubscriptionLineItem). */
export function serializeLineCommitment(li: SubscriptionLineItem) {
  return {
    commitment_amount: li.commitment_amount ?? null,
    commitment_quantity: li.commitment_quantity ?? null,
    commitment_overage_factor: li.commitment_overage_factor ?? null,
    commitment_true_up_enabled: li.commitment_true_up_enabled ?? false,
    commitment_windowed: li.commitment_windowed ?? false,
    commitment_time_buckets: li.price_override?.commitment_time_buckets ?? null,
  }
}

export interface OverrideLineItemInput extends LineItemCommitmentInput {
  price_id: string
}

/** Sets the commitments of `override_line_items` on the new line items (before the first flush). */
export async function applyOverrideCommitments(
  em: EntityManager, scope: Scope, lineItems: SubscriptionLineItem[], prices: Price[], overrides: OverrideLineItemInput[] | undefined,
): Promise<void> {
  const seen = new Set<string>()
  for (const [i, o] of (overrides ?? []).entries()) {
    const field = `override_line_items[${i}]`
    const lineItem = lineItems.find((li) => li.price_id === o.price_id)
    const price = prices.find((p) => p.id === o.price_id)
    if (!lineItem || !price) throw new ValidationError(`${field}.price_id: price ${o.price_id} is not a price this subscription takes`, `${field}.price_id`)
    if (seen.has(o.price_id)) throw new ValidationError(`${field}.price_id: price ${o.price_id} is overridden twice`, `${field}.price_id`)
    seen.add(o.price_id)
    const meter = o.commitment_time_buckets && price.meter_id ? await em.findOne(MeterSchema, { id: price.meter_id, ...scope }) : null
    Object.assign(lineItem, resolveLineCommitment(o, price, meter, field))
  }
}
