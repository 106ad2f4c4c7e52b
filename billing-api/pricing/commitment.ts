import type { Decimal } from 'decimal.js';
import { D, parseDecimal, PricingInputError, roundMoney, toMoneyString } from './money.js';

/**
 * Commitment math (pure). A commitment is a committed spend: usage priced at the normal
 * price counts against it (utilized); usage priced beyond it is charged overage_factor x
 * its normal price (overage); with true-up, an unused commitment is charged too
 * (true-up = commitment - utilized). charged = utilized + overage + true-up.
 */
export interface CommitmentTerms {
  /** committed spend per window (windowed) or per billing period, in the line's currency */
  amount: Decimal | string;
  /** >= 1; 1 charges overage at the normal price */
  overage_factor: Decimal | string;
  true_up_enabled: boolean;
}

export interface CommitmentSplit {
  utilized: Decimal;
  overage: Decimal;
  true_up: Decimal;
}

/** Wire form (spec: InvoiceLineItem.commitment_info); amounts in the currency's decimals. */
export interface CommitmentInfo {
  amount: string | null;
  quantity: string | null;
  overage_factor: string;
  computed_commitment_utilized_amount: string;
  computed_overage_amount: string;
  computed_true_up_amount: string;
  is_windowed: boolean;
  true_up_enabled: boolean;
}

interface ParsedTerms {
  amount: Decimal;
  factor: Decimal;
  trueUp: boolean;
}

export function parseCommitmentTerms(terms: CommitmentTerms): ParsedTerms {
  const amount = parseDecimal(terms.amount, 'commitment_amount');
  if (amount.isNegative()) throw new PricingInputError('commitment_amount', `must be >= 0, got ${amount.toString()}`);
  const factor = parseDecimal(terms.overage_factor, 'overage_factor');
  if (factor.lt(1)) throw new PricingInputError('overage_factor', `must be >= 1, got ${factor.toString()}`);
  return { amount, factor, trueUp: terms.true_up_enabled === true };
}

function parseUsage(usage: Decimal | string, field: string): Decimal {
  const value = parseDecimal(usage, field);
  if (value.isNegative()) throw new PricingInputError(field, `must be >= 0, got ${value.toString()}`);
  return value;
}

/** One commitment against one usage amount (already priced, unrounded). Results are unrounded. */
export function applyCommitment(usage: Decimal | string, terms: CommitmentTerms): CommitmentSplit {
  const t = parseCommitmentTerms(terms);
  return splitOne(parseUsage(usage, 'usage'), t);
}

function splitOne(usage: Decimal, t: ParsedTerms): CommitmentSplit {
  const utilized = D.min(usage, t.amount);
  const overage = usage.minus(utilized).times(t.factor);
  const trueUp = t.trueUp ? t.amount.minus(utilized) : new D(0);
  return { utilized, overage, true_up: trueUp };
}

const zeroSplit = (): CommitmentSplit => ({ utilized: new D(0), overage: new D(0), true_up: new D(0) });

const addSplit = (a: CommitmentSplit, b: CommitmentSplit): CommitmentSplit => ({
  utilized: a.utilized.plus(b.utilized),
  overage: a.overage.plus(b.overage),
  true_up: a.true_up.plus(b.true_up),
});

/**
 * Windowed commitment: the full commitment applies to every window on its own (usage of one
 * window never fills another's commitment), and the windows' splits are summed. Every window
 * of the period must be listed, including those without usage ("0"), so true-up sees them.
 * `shares` (optional, one per window, in [0, 1]): a window cut short by the period boundary
 * commits only its share of the commitment (prorateCommitment).
 */
export function applyWindowedCommitment(windows: (Decimal | string)[], terms: CommitmentTerms, shares?: (Decimal | string)[]): CommitmentSplit {
  const t = parseCommitmentTerms(terms);
  return windows.reduce<CommitmentSplit>((sum, w, i) => {
    const share = shares?.[i];
    const own = share === undefined ? t : { ...t, amount: t.amount.times(parseShare(share, `shares[${i}]`)) };
    return addSplit(sum, splitOne(parseUsage(w, `windows[${i}]`), own));
  }, zeroSplit());
}

function parseShare(share: Decimal | string, field: string): Decimal {
  const value = parseDecimal(share, field);
  if (value.isNegative() || value.gt(1)) throw new PricingInputError(field, `must be between 0 and 1, got ${value.toString()}`);
  return value;
}

/**
 * The commitment of a period shorter than a full one (a calendar stub period, a cancellation's
 * final period): the committed amount times the period's share (seconds / full period's seconds),
 * unrounded. The factor and true-up are unchanged.
 */
export function prorateCommitment(terms: CommitmentTerms, share: Decimal | string): CommitmentTerms {
  return { ...terms, amount: parseCommitmentTerms(terms).amount.times(parseShare(share, 'share')) };
}

/**
 * Subscription-level commitment shared by several usage lines (usage amounts in invoice line
 * order). The commitment is consumed in that order: each line's usage counts as utilized until
 * the commitment is used up, and the rest of it (and of every later line) is overage. An unused
 * commitment (true-up) is attributed to the first line.
 */
export function applySharedCommitment(lines: (Decimal | string)[], terms: CommitmentTerms): CommitmentSplit[] {
  const t = parseCommitmentTerms(terms);
  let remaining = t.amount;
  const splits = lines.map((l, i) => {
    const usage = parseUsage(l, `lines[${i}]`);
    const utilized = D.min(usage, remaining);
    remaining = remaining.minus(utilized);
    return { utilized, overage: usage.minus(utilized).times(t.factor), true_up: new D(0) };
  });
  if (t.trueUp && splits.length > 0) splits[0].true_up = remaining;
  return splits;
}

/**
 * Rounds a split for an invoice line: each part is rounded once, half-up, to the currency,
 * and the line's amount is the sum of the rounded parts, so commitment_info always adds up
 * to the line amount exactly. `alreadyBilled` (a money amount, default 0): what earlier
 * invoices of the same period (automatic threshold invoices) billed for the line; the split
 * covers the whole period and the line's amount is its sum minus that.
 */
export function settleCommitment(
  split: CommitmentSplit,
  currency: string,
  describe: { amount: string | null; quantity: string | null; overage_factor: Decimal | string; is_windowed: boolean; true_up_enabled: boolean },
  alreadyBilled: Decimal | string = '0',
): { amount: Decimal; info: CommitmentInfo } {
  const utilized = roundMoney(split.utilized, currency);
  const overage = roundMoney(split.overage, currency);
  const trueUp = roundMoney(split.true_up, currency);
  return {
    amount: utilized.plus(overage).plus(trueUp).minus(parseDecimal(alreadyBilled, 'already_billed')),
    info: {
      amount: describe.amount === null ? null : toMoneyString(describe.amount, currency),
      quantity: describe.quantity === null ? null : new D(describe.quantity).toString(),
      overage_factor: new D(describe.overage_factor).toString(),
      computed_commitment_utilized_amount: toMoneyString(utilized, currency),
      computed_overage_amount: toMoneyString(overage, currency),
      computed_true_up_amount: toMoneyString(trueUp, currency),
      is_windowed: describe.is_windowed,
      true_up_enabled: describe.true_up_enabled,
    },
  };
}
