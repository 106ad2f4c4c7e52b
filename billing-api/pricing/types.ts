import type { Decimal } from 'decimal.js';

export type PriceType = 'FIXED' | 'USAGE';
export type BillingModel = 'FLAT_FEE' | 'PACKAGE' | 'TIERED';
export type TierMode = 'VOLUME' | 'SLAB';

/**
 * One tier as on the wire. `up_to` is an inclusive upper bound (positive integer);
 * the last tier, and only it, has `up_to: null` (open ended).
 */
export interface PriceTier {
  up_to: number | null;
  unit_amount: string;
  flat_amount?: string;
}

export interface TransformQuantity {
  divide_by: number;
  round: 'up' | 'down';
}

export interface PricingUnitDefinition {
  code: string;
  /** Base-currency value of one pricing unit: 1 credit = "0.01" USD. */
  conversion_rate: string;
  base_currency: string;
}

/** The fields of the spec's Price that pricing needs; snake_case as on the wire. */
export interface PriceDefinition {
  type: PriceType;
  billing_model: BillingModel;
  /** Required when billing_model is TIERED. */
  tier_mode?: TierMode;
  /**
   * Per unit for FLAT_FEE, the package price for PACKAGE. Unused by TIERED and
   * when pricing_unit is set (price_unit_amount is used instead).
   */
  amount?: string;
  currency: string;
  tiers?: PriceTier[];
  /** Required for PACKAGE, rejected for the other models. */
  transform_quantity?: TransformQuantity;
  /** USAGE prices bill max(quantity, min_quantity); ignored for FIXED. */
  min_quantity?: string;
  /** When set, amounts come from price_unit_amount / price_unit_tiers (in pricing units). */
  pricing_unit?: PricingUnitDefinition;
  price_unit_amount?: string;
  price_unit_tiers?: PriceTier[];
}

/**
 * One row of a calculation's breakdown, all decimal strings at full precision.
 * `tier` is the 0-based index into the tiers list (as in `tiers[2]`).
 * A tier covers quantities in (from, to]: `from` is exclusive (the previous
 * tier's up_to, 0 for the first tier) and `to` inclusive, null when open ended.
 */
export interface BreakdownLine {
  tier?: number;
  from: string;
  to: string | null;
  quantity: string;
  unit_amount: string;
  flat_amount: string;
  amount: string;
}

export interface CalculationResult {
  /** unrounded rounded once to the currency's minor unit. */
  amount: Decimal;
  /** Full-precision total in the price's currency; equals the sum of breakdown amounts. */
  unrounded: Decimal;
  /** Quantity actually billed: max(quantity, min_quantity) for USAGE prices. */
  billed_quantity: Decimal;
  /** Unrounded total in pricing units, present only when the price has a pricing_unit. */
  price_unit_amount?: Decimal;
  breakdown: BreakdownLine[];
}

/** A tier after validation, as Decimals. */
export interface ParsedTier {
  index: number;
  /** Exclusive lower bound. */
  from: Decimal;
  /** Inclusive upper bound; null when open ended. */
  upTo: Decimal | null;
  unitAmount: Decimal;
  flatAmount: Decimal;
}

/** What every charge model returns: a total and the lines that sum to it. */
export interface ChargeLine {
  tier?: number;
  from: Decimal;
  to: Decimal | null;
  quantity: Decimal;
  unitAmount: Decimal;
  flatAmount: Decimal;
  amount: Decimal;
}

export interface ChargeResult {
  total: Decimal;
  lines: ChargeLine[];
}
