// Pure part of an invoice line's explain trail: the pricing steps that turn the line's priced
// quantity into its amount, through the same pricing engine the invoice used, and the keyset
// cursor of the raw-events page. No I/O.
import { ValidationError } from '../../platform/errors.js'
import { calculateAmount, D, toMoneyString, type CommitmentInfo } from '../pricing/index.js'
import { toPriceDefinition } from '../plans/index.js'
import type { Price } from '../plans/price.entity.js'
import type { PricedLine } from './charges.js'

export interface PricingSteps {
  billing_model: string
  tier_mode: string | null
  /** what the price was applied to: the priced quantity, or min_quantity when larger */
  billed_quantity: string
  /** one row per tier (or the one flat/package row): quantity x unit_amount + flat_amount */
  steps: { tier: number | null; from: string; to: string | null; quantity: string; unit_amount: string; flat_amount: string; amount: string }[]
  /** the sum of the steps at full precision, in the invoice currency */
  unrounded: string
  /** a partial period: amount x seconds / of, rounded once */
  proration: { seconds: number; of: number } | null
  commitment_info: CommitmentInfo | null
  /** usage already billed by threshold invoices of the period, taken off */
  threshold_billed: string | null
  /** the line amount these steps give (before coupons) */
  amount: string
}

/**
 * The steps of a priced line (charges.ts priceCharges). With a commitment the amount is the
 * commitment's settlement (commitment_info); the steps still show the usage pricing under it.
 */
export function pricingSteps(price: Price, line: Pick<PricedLine, 'quantity' | 'share' | 'threshold_billed' | 'commitment_info' | 'amount'>, currency: string): PricingSteps {
  const result = calculateAmount(toPriceDefinition(price), line.quantity)
  return {
    billing_model: price.billing_model,
    tier_mode: price.tier_mode,
    billed_quantity: result.billed_quantity.toString(),
    steps: result.breakdown.map((b) => ({
      tier: b.tier ?? null, from: b.from, to: b.to, quantity: b.quantity, unit_amount: b.unit_amount, flat_amount: b.flat_amount, amount: b.amount,
    })),
    unrounded: result.unrounded.toString(),
    proration: line.share ?? null,
    commitment_info: line.commitment_info,
    threshold_billed: line.threshold_billed ?? null,
    amount: toMoneyString(line.amount, currency),
  }
}

export interface EventsCursor {
  timestampMs: number
  eventId: string
}

export function encodeCursor(c: EventsCursor): string {
  return Buffer.from(JSON.stringify([c.timestampMs, c.eventId]), 'utf8').toString('base64url')
}

export function decodeCursor(text: string): EventsCursor {
  try {
    const v: unknown = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
    if (Array.isArray(v) && v.length === 2) {
      const pair = v as unknown[]
      const [ts, id] = pair
      if (typeof ts === 'number' && Number.isSafeInteger(ts) && typeof id === 'string') return { timestampMs: ts, eventId: id }
    }
  } catch {
    // fall through
  }
  throw new ValidationError('events_cursor is not a cursor this endpoint returned', 'events_cursor')
}

/** Whether the recomputed amount is the stored one, compared as decimals. */
export const sameAmount = (a: string, b: string): boolean => D(a).eq(D(b))
