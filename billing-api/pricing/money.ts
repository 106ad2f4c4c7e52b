/**
 * Money rules for the pricing engine, defined once here.
 *
 * Rounding rule: amounts are computed at full precision (50 significant digits)
 * and rounded ONCE per line item to the currency's ISO 4217 minor unit, half-up:
 * ties go away from zero, so 2.5 -> 3 and -2.5 -> -3 (Decimal.ROUND_HALF_UP,
 * not banker's rounding). Nothing in a money path is ever a JS float.
 */
import { Decimal } from 'decimal.js';

/**
 * The engine's own Decimal constructor, so no global Decimal config is needed.
 * toExpNeg/toExpPos keep toString() in plain notation ("0.0000001", never "1e-7"),
 * because amounts leave the engine as decimal strings.
 */
export const D = Decimal.clone({
  precision: 50,
  rounding: Decimal.ROUND_HALF_UP,
  toExpNeg: -9e15,
  toExpPos: 9e15,
});

/** Invalid pricing input; `field` names the offending input, e.g. `tiers[2].up_to`. */
export class PricingInputError extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.name = 'PricingInputError';
    this.field = field;
  }
}

// ISO 4217 minor units that differ from the default of 2.
const MINOR_UNITS: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0,
  RWF: 0, UGX: 0, UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

const CURRENCY_RE = /^[A-Za-z]{3}$/;

/** Number of decimals of the currency's minor unit (ISO 4217); 2 when not listed. */
export function currencyPrecision(currency: string): number {
  if (typeof currency !== 'string' || !CURRENCY_RE.test(currency)) {
    throw new PricingInputError('currency', `expected a 3-letter ISO 4217 code, got ${JSON.stringify(currency)}`);
  }
  return MINOR_UNITS[currency.toUpperCase()] ?? 2;
}

/** Rounds to the currency's minor unit, half-up (away from zero on ties). Never returns -0. */
export function roundMoney(amount: Decimal, currency: string): Decimal {
  const rounded = new D(amount).toDecimalPlaces(currencyPrecision(currency), D.ROUND_HALF_UP);
  return rounded.isZero() ? new D(0) : rounded;
}

/** Rounds like roundMoney and prints exactly the currency's decimals: "12.30", "1200" (JPY). */
export function toMoneyString(amount: Decimal | string, currency: string): string {
  const value = typeof amount === 'string' ? parseDecimal(amount, 'amount') : amount;
  return roundMoney(value, currency).toFixed(currencyPrecision(currency));
}

const DECIMAL_RE = /^-?\d+(\.\d+)?$/;

/**
 * Parses a wire value into a Decimal. Accepts decimal strings ("12", "-0.5"),
 * bigints, safe-integer numbers and finite Decimals. Rejects fractional JS
 * numbers (0.1 is already inexact), exponents, "+", blanks and anything else.
 */
export function parseDecimal(value: unknown, field: string): Decimal {
  if (typeof value === 'string') {
    if (!DECIMAL_RE.test(value)) {
      throw new PricingInputError(field, `expected a decimal string, got ${JSON.stringify(value)}`);
    }
    return normalize(new D(value));
  }
  if (typeof value === 'bigint') return normalize(new D(value.toString()));
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) {
      throw new PricingInputError(field, `JS number ${value} is not a safe integer; send a decimal string`);
    }
    return normalize(new D(value));
  }
  if (Decimal.isDecimal(value)) {
    if (!value.isFinite()) throw new PricingInputError(field, `expected a finite decimal, got ${value.toString()}`);
    return normalize(new D(value));
  }
  throw new PricingInputError(field, `expected a decimal string, got ${value === null ? 'null' : typeof value}`);
}

function normalize(value: Decimal): Decimal {
  return value.isZero() ? new D(0) : value;
}
