// Public API of the pure pricing engine: decimals in, decimals out; no I/O, no clock.
export { calculateAmount } from './calculate-amount.js';
export { calculateFlatFee } from './flat.js';
export { D, PricingInputError, currencyPrecision, parseDecimal, roundMoney, toMoneyString } from './money.js';
export { calculatePackage, packageCount } from './package.js';
export { convertCharge, parseConversionRate, toBaseCurrency } from './pricing-unit.js';
export { calculateTieredSlab } from './tiered-slab.js';
export { calculateTieredVolume, findVolumeTier } from './tiered-volume.js';
export { validateTiers } from './tiers.js';
export type {
  BillingModel,
  BreakdownLine,
  CalculationResult,
  ChargeLine,
  ChargeResult,
  ParsedTier,
  PriceDefinition,
  PriceTier,
  PriceType,
  PricingUnitDefinition,
  TierMode,
  TransformQuantity,
} from './types.js';
export { applyCommitment, applySharedCommitment, applyWindowedCommitment, parseCommitmentTerms, prorateCommitment, settleCommitment } from './commitment.js';
export type { CommitmentInfo, CommitmentSplit, CommitmentTerms } from './commitment.js';
export { checkTimeBuckets, commitmentWindows } from './commitment-windows.js';
export type { BucketGranularity, TimeBucket, TimeOfDay, Window } from './commitment-windows.js';
