import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import { calculateAmount } from './calculate-amount.js';
import { D, PricingInputError } from './money.js';
import type { PriceDefinition } from './types.js';

const isFieldError = (field: string) => (err: unknown) =>
  err instanceof PricingInputError && err.field === field;
const usage = (fields: Partial<PriceDefinition>): PriceDefinition => ({
  type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'USD', ...fields,
});
const amountOf = (price: PriceDefinition, q: string) => calculateAmount(price, q).amount.toString();

describe('FLAT_FEE', () => {
  test('fixed fee x quantity', () => {
    const fixed: PriceDefinition = { type: 'FIXED', billing_model: 'FLAT_FEE', amount: '49.99', currency: 'USD' };
    assert.equal(amountOf(fixed, '1'), '49.99');
    assert.equal(amountOf(fixed, '3'), '149.97'); // 3 seats
  });

  test('per-unit usage: 12,345 calls @ 0.0015 = 18.5175 -> 18.52', () => {
    const result = calculateAmount(usage({ amount: '0.0015' }), '12345');
    assert.equal(result.unrounded.toString(), '18.5175');
    assert.equal(result.amount.toString(), '18.52');
    assert.deepEqual(result.breakdown, [
      { from: '0', to: null, quantity: '12345', unit_amount: '0.0015', flat_amount: '0', amount: '18.5175' },
    ]);
  });

  test('decimal arithmetic is exact: 3 x 0.1 = 0.3 (a float says 0.30000000000000004)', () => {
    assert.equal(calculateAmount(usage({ amount: '0.1' }), '3').unrounded.toString(), '0.3');
  });

  test('large quantities keep every digit', () => {
    assert.equal(calculateAmount(usage({ amount: '0.000001' }), '1000000000000').unrounded.toString(), '1000000');
    assert.equal(amountOf(usage({ amount: '0.0000001' }), '123456789012345678'), '12345678901.23');
  });
});

describe('PACKAGE', () => {
  // 5.00 per package of 100 units.
  const pkg = (round: 'up' | 'down') =>
    usage({ billing_model: 'PACKAGE', amount: '5', transform_quantity: { divide_by: 100, round } });
  const cases: [string, 'up' | 'down', string, string][] = [
    // [quantity, round, packages, amount]
    ['0', 'up', '0', '0'], // nothing used, nothing billed, even rounding up
    ['0', 'down', '0', '0'],
    ['0.5', 'up', '1', '5'],
    ['99', 'down', '0', '0'],
    ['100', 'up', '1', '5'],
    ['100', 'down', '1', '5'],
    ['101', 'up', '2', '10'],
    ['250', 'up', '3', '15'], // ceil(2.5) = 3
    ['250', 'down', '2', '10'], // floor(2.5) = 2
  ];
  for (const [q, round, packages, amount] of cases) {
    test(`${q} units, round ${round} -> ${packages} packages = ${amount}`, () => {
      const result = calculateAmount(pkg(round), q);
      assert.equal(result.amount.toString(), amount);
      assert.equal(result.breakdown[0]?.quantity, packages);
      assert.equal(result.breakdown[0]?.unit_amount, '5');
    });
  }
});

describe('min_quantity (USAGE prices bill max(quantity, min_quantity))', () => {
  const price = usage({ amount: '0.02', min_quantity: '100' });
  test('below the minimum bills the minimum: 40 -> 100 x 0.02 = 2.00', () => {
    const result = calculateAmount(price, '40');
    assert.equal(result.billed_quantity.toString(), '100');
    assert.equal(result.amount.toString(), '2');
  });
  test('above the minimum bills the usage: 150 x 0.02 = 3.00', () => assert.equal(amountOf(price, '150'), '3'));
  test('zero usage still bills the minimum', () => assert.equal(amountOf(price, '0'), '2'));
  test('applies before packaging: max(10, 250) = 250 -> ceil(2.5) = 3 packages = 15', () => {
    const pkg = usage({ billing_model: 'PACKAGE', amount: '5', min_quantity: '250', transform_quantity: { divide_by: 100, round: 'up' } });
    assert.equal(amountOf(pkg, '10'), '15');
  });
  test('is ignored for FIXED prices', () => {
    const fixed: PriceDefinition = { type: 'FIXED', billing_model: 'FLAT_FEE', amount: '10', currency: 'USD', min_quantity: '5' };
    assert.equal(amountOf(fixed, '1'), '10');
  });
  test('must be a non-negative decimal', () => {
    assert.throws(() => calculateAmount(usage({ amount: '1', min_quantity: '-1' }), '1'), isFieldError('min_quantity'));
    assert.throws(() => calculateAmount(usage({ amount: '1', min_quantity: 'ten' }), '1'), isFieldError('min_quantity'));
  });
});

describe('pricing units (amounts in credits, 1 credit = 0.01 USD)', () => {
  const credits = { code: 'CREDIT', conversion_rate: '0.01', base_currency: 'USD' };
  test('flat: 1,234 units @ 2 credits = 2,468 credits = 24.68 USD', () => {
    const result = calculateAmount(usage({ pricing_unit: credits, price_unit_amount: '2', amount: '999' }), '1234');
    assert.equal(result.price_unit_amount?.toString(), '2468');
    assert.equal(result.amount.toString(), '24.68'); // `amount` (999) is ignored when a pricing unit is set
    assert.equal(result.breakdown[0]?.unit_amount, '0.02'); // breakdown is in the base currency
  });
  test('slab in credits: 150 units = 100 x 1 + 50 x 0.5 + flat 20 = 145 credits = 1.45 USD', () => {
    const price = usage({
      billing_model: 'TIERED', tier_mode: 'SLAB', pricing_unit: credits,
      price_unit_tiers: [{ up_to: 100, unit_amount: '1' }, { up_to: null, unit_amount: '0.5', flat_amount: '20' }],
    });
    const result = calculateAmount(price, '150');
    assert.equal(result.price_unit_amount?.toString(), '145');
    assert.equal(result.unrounded.toString(), '1.45');
    assert.deepEqual(result.breakdown.map((l) => [l.amount, l.flat_amount]), [['1', '0'], ['0.45', '0.2']]);
  });
  test('converts before rounding once: 2 x 1 credit @ 0.0125 = 0.025 -> 0.03 (half-up)', () => {
    const price = usage({ pricing_unit: { ...credits, conversion_rate: '0.0125' }, price_unit_amount: '1' });
    assert.equal(amountOf(price, '1'), '0.01'); // 0.0125
    assert.equal(amountOf(price, '2'), '0.03'); // 0.025
  });
  test('base currency precision applies: 3 credits @ 1.5 JPY = 4.5 -> 5 JPY', () => {
    const price = usage({ currency: 'JPY', pricing_unit: { code: 'PTS', conversion_rate: '1.5', base_currency: 'JPY' }, price_unit_amount: '1' });
    assert.equal(amountOf(price, '3'), '5');
  });
  test('rejects a mismatched base currency, a non-positive rate, a missing amount', () => {
    const mismatched = usage({ pricing_unit: { ...credits, base_currency: 'EUR' }, price_unit_amount: '1' });
    assert.throws(() => calculateAmount(mismatched, '1'), isFieldError('pricing_unit.base_currency'));
    const zeroRate = usage({ pricing_unit: { ...credits, conversion_rate: '0' }, price_unit_amount: '1' });
    assert.throws(() => calculateAmount(zeroRate, '1'), isFieldError('pricing_unit.conversion_rate'));
    assert.throws(() => calculateAmount(usage({ pricing_unit: credits, amount: '1' }), '1'), isFieldError('price_unit_amount'));
  });
});

describe('no floats in money paths (f)', () => {
  test('a JS number with a fraction is rejected, wherever it appears', () => {
    const floatAmount = usage({ amount: 0.1 as unknown as string });
    assert.throws(() => calculateAmount(floatAmount, '1'), isFieldError('amount'));
    assert.throws(() => calculateAmount(usage({ amount: '1' }), 1.5 as unknown as string), isFieldError('quantity'));
    const floatTier = usage({ billing_model: 'TIERED', tier_mode: 'SLAB', tiers: [{ up_to: null, unit_amount: 0.01 as unknown as string }] });
    assert.throws(() => calculateAmount(floatTier, '1'), isFieldError('tiers[0].unit_amount'));
  });
  test('results are Decimal instances of D', () => {
    const result = calculateAmount(usage({ amount: '1.5', min_quantity: '1' }), '2');
    for (const value of [result.amount, result.unrounded, result.billed_quantity]) {
      assert.ok(value instanceof D);
      assert.ok(Decimal.isDecimal(value));
    }
  });
  test('quantity may be a Decimal (from any Decimal constructor)', () => {
    assert.equal(calculateAmount(usage({ amount: '2' }), new Decimal('1.25')).amount.toString(), '2.5');
  });
});

describe('input errors name the field', () => {
  const cases: [string, PriceDefinition, string, string][] = [
    ['negative quantity', usage({ amount: '1' }), '-1', 'quantity'],
    ['quantity with exponent', usage({ amount: '1' }), '1e3', 'quantity'],
    ['unknown type', usage({ type: 'ONETIME' as never, amount: '1' }), '1', 'type'],
    ['unknown billing model', usage({ billing_model: 'PER_SEAT' as never, amount: '1' }), '1', 'billing_model'],
    ['bad currency', usage({ currency: 'dollars', amount: '1' }), '1', 'currency'],
    ['missing amount', usage({}), '1', 'amount'],
    ['TIERED without tier_mode', usage({ billing_model: 'TIERED', tiers: [{ up_to: null, unit_amount: '1' }] }), '1', 'tier_mode'],
    ['TIERED without tiers', usage({ billing_model: 'TIERED', tier_mode: 'VOLUME' }), '1', 'tiers'],
    ['PACKAGE without transform', usage({ billing_model: 'PACKAGE', amount: '5' }), '1', 'transform_quantity'],
    ['divide_by 0', usage({ billing_model: 'PACKAGE', amount: '5', transform_quantity: { divide_by: 0, round: 'up' } }), '1', 'transform_quantity.divide_by'],
    ['fractional divide_by', usage({ billing_model: 'PACKAGE', amount: '5', transform_quantity: { divide_by: 2.5, round: 'up' } }), '1', 'transform_quantity.divide_by'],
    ['unknown round', usage({ billing_model: 'PACKAGE', amount: '5', transform_quantity: { divide_by: 10, round: 'nearest' as never } }), '1', 'transform_quantity.round'],
    ['transform on FLAT_FEE', usage({ amount: '5', transform_quantity: { divide_by: 10, round: 'up' } }), '1', 'transform_quantity'],
  ];
  for (const [name, price, q, field] of cases) {
    test(`${name} -> ${field}`, () => assert.throws(() => calculateAmount(price, q), isFieldError(field)));
  }
});
