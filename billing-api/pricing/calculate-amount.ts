import type { Decimal } from 'decimal.js';
import { calculateFlatFee } from './flat.js';
import { currencyPrecision, parseDecimal, PricingInputError, roundMoney } from './money.js';
import { calculatePackage } from './package.js';
import { convertCharge, parseConversionRate } from './pricing-unit.js';
import { calculateTieredSlab } from './tiered-slab.js';
import { calculateTieredVolume } from './tiered-volume.js';
import { validateTiers } from './tiers.js';
import type { BreakdownLine, CalculationResult, ChargeLine, ChargeResult, PriceDefinition } from './types.js';

/**
 * Prices `quantity` units of `price`:
 * 1. quantity must be >= 0; USAGE prices bill max(quantity, min_quantity)
 *    (min_quantity is ignored for FIXED prices);
 * 2. the billing model computes the charge at full precision, in pricing units
 *    when the price has a pricing_unit, then converted to the base currency;
 * 3. the total is rounded ONCE with roundMoney (half-up to the currency's minor
 *    unit). Breakdown lines stay unrounded and sum exactly to `unrounded`.
 * Invalid input throws PricingInputError naming the field.
 */
export function calculateAmount(price: PriceDefinition, quantity: Decimal | string): CalculationResult {
  if (typeof price !== 'object' || price === null) throw new PricingInputError('price', 'expected a price object');
  if (price.type !== 'FIXED' && price.type !== 'USAGE') {
    throw new PricingInputError('type', `expected FIXED or USAGE, got ${String(price.type)}`);
  }
  currencyPrecision(price.currency); // throws on a malformed currency before any math

  const billed = billedQuantity(price, parseQuantity(quantity));
  const rate = price.pricing_unit == null ? null : parseConversionRate(price.pricing_unit, price.currency);
  const inUnits = chargeModel(price, billed, rate !== null);
  const charge = rate === null ? inUnits : convertCharge(inUnits, rate);

  return {
    amount: roundMoney(charge.total, price.currency),
    unrounded: charge.total,
    billed_quantity: billed,
    ...(rate === null ? {} : { price_unit_amount: inUnits.total }),
    breakdown: charge.lines.map(toBreakdownLine),
  };
}

function parseQuantity(quantity: unknown): Decimal {
  const value = parseDecimal(quantity, 'quantity');
  if (value.isNegative()) throw new PricingInputError('quantity', `must be >= 0, got ${value.toString()}`);
  return value;
}

function billedQuantity(price: PriceDefinition, quantity: Decimal): Decimal {
  if (price.type !== 'USAGE' || price.min_quantity === undefined || price.min_quantity === null) return quantity;
  const min = parseDecimal(price.min_quantity, 'min_quantity');
  if (min.isNegative()) throw new PricingInputError('min_quantity', `must be >= 0, got ${min.toString()}`);
  return quantity.lt(min) ? min : quantity;
}

/** Dispatches to the billing model; amounts are read in pricing units when `inPriceUnits`. */
function chargeModel(price: PriceDefinition, quantity: Decimal, inPriceUnits: boolean): ChargeResult {
  const amountField = inPriceUnits ? 'price_unit_amount' : 'amount';
  const tiersField = inPriceUnits ? 'price_unit_tiers' : 'tiers';
  if (price.billing_model !== 'PACKAGE' && price.transform_quantity !== undefined && price.transform_quantity !== null) {
    throw new PricingInputError('transform_quantity', 'only allowed when billing_model is PACKAGE');
  }
  switch (price.billing_model) {
    case 'FLAT_FEE':
      return calculateFlatFee(parseDecimal(price[amountField], amountField), quantity);
    case 'PACKAGE': {
      const { divideBy, round } = parseTransform(price.transform_quantity);
      return calculatePackage(parseDecimal(price[amountField], amountField), quantity, divideBy, round);
    }
    case 'TIERED': {
      const tiers = validateTiers(price[tiersField], tiersField);
      if (price.tier_mode === 'VOLUME') return calculateTieredVolume(tiers, quantity);
      if (price.tier_mode === 'SLAB') return calculateTieredSlab(tiers, quantity);
      throw new PricingInputError('tier_mode', `expected VOLUME or SLAB, got ${String(price.tier_mode)}`);
    }
    default:
      throw new PricingInputError('billing_model', `expected FLAT_FEE, PACKAGE or TIERED, got ${String(price.billing_model)}`);
  }
}

function parseTransform(transform: PriceDefinition['transform_quantity']): { divideBy: Decimal; round: 'up' | 'down' } {
  if (typeof transform !== 'object' || transform === null) {
    throw new PricingInputError('transform_quantity', 'required when billing_model is PACKAGE');
  }
  const { divide_by, round } = transform;
  if (typeof divide_by !== 'number' || !Number.isSafeInteger(divide_by) || divide_by <= 0) {
    throw new PricingInputError('transform_quantity.divide_by', `expected a positive integer, got ${String(divide_by)}`);
  }
  if (round !== 'up' && round !== 'down') {
    throw new PricingInputError('transform_quantity.round', `expected up or down, got ${String(round)}`);
  }
  return { divideBy: parseDecimal(divide_by, 'transform_quantity.divide_by'), round };
}

function toBreakdownLine(line: ChargeLine): BreakdownLine {
  return {
    ...(line.tier === undefined ? {} : { tier: line.tier }),
    from: line.from.toString(),
    to: line.to === null ? null : line.to.toString(),
    quantity: line.quantity.toString(),
    unit_amount: line.unitAmount.toString(),
    flat_amount: line.flatAmount.toString(),
    amount: line.amount.toString(),
  };
}
