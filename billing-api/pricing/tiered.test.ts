import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { calculateAmount } from './calculate-amount.js';
import { D, PricingInputError } from './money.js';
import { validateTiers } from './tiers.js';
import type { PriceDefinition, PriceTier } from './types.js';

const isFieldError = (field: string) => (err: unknown) =>
  err instanceof PricingInputError && err.field === field;

// The reference tiers: units 1-1000 @ 0.01, 1001-5000 @ 0.008 plus a flat 10
// when the tier is reached, 5001 and up @ 0.005.
const TIERS: PriceTier[] = [
  { up_to: 1000, unit_amount: '0.01' },
  { up_to: 5000, unit_amount: '0.008', flat_amount: '10' },
  { up_to: null, unit_amount: '0.005' },
];
const price = (tier_mode: 'SLAB' | 'VOLUME', tiers = TIERS): PriceDefinition => ({
  type: 'USAGE', billing_model: 'TIERED', tier_mode, currency: 'USD', tiers,
});
const total = (p: PriceDefinition, q: string) => calculateAmount(p, q);

describe('SLAB (graduated)', () => {
  test('7,500 units = 64.50, worked by hand', () => {
    // tier 0: 1000 units x 0.01          = 10
    // tier 1: 4000 units x 0.008 = 32, + flat 10 = 42
    // tier 2: 2500 units x 0.005         = 12.5
    // total 10 + 42 + 12.5 = 64.5 -> USD 64.50
    const result = total(price('SLAB'), '7500');
    assert.equal(result.unrounded.toString(), '64.5');
    assert.equal(result.amount.toFixed(2), '64.50');
    assert.deepEqual(result.breakdown, [
      { tier: 0, from: '0', to: '1000', quantity: '1000', unit_amount: '0.01', flat_amount: '0', amount: '10' },
      { tier: 1, from: '1000', to: '5000', quantity: '4000', unit_amount: '0.008', flat_amount: '10', amount: '42' },
      { tier: 2, from: '5000', to: null, quantity: '2500', unit_amount: '0.005', flat_amount: '0', amount: '12.5' },
    ]);
  });

  const cases: [string, string, string][] = [
    // [quantity, unrounded, rounded]
    ['0', '0', '0'], // no tier touched: no flat fee either
    ['1', '0.01', '0.01'],
    ['1000', '10', '10'], // up_to is inclusive: unit 1000 is still in tier 0
    ['1001', '20.008', '20.01'], // 10 + 1 x 0.008 + flat 10 (tier 1 touched)
    ['1000.5', '20.004', '20'], // fractional usage touches tier 1: 10 + 0.5 x 0.008 + 10
    ['5000', '52', '52'], // 10 + 4000 x 0.008 + 10
    ['5001', '52.005', '52.01'], // + 1 x 0.005, half-up
  ];
  for (const [q, unrounded, rounded] of cases) {
    test(`${q} units -> ${unrounded} (rounded ${rounded})`, () => {
      const result = total(price('SLAB'), q);
      assert.equal(result.unrounded.toString(), unrounded);
      assert.equal(result.amount.toString(), rounded);
    });
  }

  test('quantity 0 has an empty breakdown', () => {
    assert.deepEqual(total(price('SLAB'), '0').breakdown, []);
  });

  test('rounds once on the total, not per tier', () => {
    // 1 unit @ 0.005 in each tier: 0.005 + 0.005 = 0.01. Rounding each tier
    // first would give 0.01 + 0.01 = 0.02.
    const tiers = [{ up_to: 1, unit_amount: '0.005' }, { up_to: null, unit_amount: '0.005' }];
    const result = total(price('SLAB', tiers), '2');
    assert.deepEqual(result.breakdown.map((l) => l.amount), ['0.005', '0.005']);
    assert.equal(result.amount.toFixed(2), '0.01');
  });
});

describe('VOLUME', () => {
  const cases: [string, number | null, string, string][] = [
    // [quantity, tier, unrounded, rounded]
    ['1', 0, '0.01', '0.01'],
    ['1000', 0, '10', '10'], // up_to inclusive: all 1000 @ 0.01
    ['1001', 1, '18.008', '18.01'], // all 1001 @ 0.008 = 8.008, + flat 10
    ['1000.5', 1, '18.004', '18'], // anything above up_to moves to the next tier
    ['5000', 1, '50', '50'], // 5000 x 0.008 + 10
    ['5001', 2, '25.005', '25.01'], // all 5001 @ 0.005: the total DROPS from 50 to 25.01
    ['7500', 2, '37.5', '37.5'],
  ];
  for (const [q, tier, unrounded, rounded] of cases) {
    test(`${q} units -> tier ${tier}, ${unrounded} (rounded ${rounded})`, () => {
      const result = total(price('VOLUME'), q);
      assert.equal(result.unrounded.toString(), unrounded);
      assert.equal(result.amount.toString(), rounded);
      assert.equal(result.breakdown.length, 1);
      assert.equal(result.breakdown[0]?.tier, tier);
      assert.equal(result.breakdown[0]?.quantity, new D(q).toString());
    });
  }

  test('quantity 0 reaches no tier: 0, no flat fee, empty breakdown', () => {
    const tiers = [{ up_to: 10, unit_amount: '1', flat_amount: '5' }, { up_to: null, unit_amount: '1' }];
    const result = total(price('VOLUME', tiers), '0');
    assert.equal(result.amount.toString(), '0');
    assert.deepEqual(result.breakdown, []);
  });

  test('a single open tier prices every unit the same', () => {
    const result = total(price('VOLUME', [{ up_to: null, unit_amount: '0.25', flat_amount: '1' }]), '9');
    assert.equal(result.unrounded.toString(), '3.25');
  });
});

describe('validateTiers', () => {
  test('returns Decimal tiers with exclusive `from` bounds', () => {
    const parsed = validateTiers(TIERS);
    assert.deepEqual(
      parsed.map((t) => [t.index, t.from.toString(), t.upTo?.toString() ?? null, t.unitAmount.toString(), t.flatAmount.toString()]),
      [[0, '0', '1000', '0.01', '0'], [1, '1000', '5000', '0.008', '10'], [2, '5000', null, '0.005', '0']],
    );
  });

  const bad: [string, unknown, string][] = [
    ['empty list', [], 'tiers'],
    ['not a list', { up_to: null, unit_amount: '1' }, 'tiers'],
    ['not ascending', [{ up_to: 1000, unit_amount: '1' }, { up_to: 5000, unit_amount: '1' }, { up_to: 4000, unit_amount: '1' }, { up_to: null, unit_amount: '1' }], 'tiers[2].up_to'],
    ['equal up_to', [{ up_to: 10, unit_amount: '1' }, { up_to: 10, unit_amount: '1' }, { up_to: null, unit_amount: '1' }], 'tiers[1].up_to'],
    ['open tier before the last', [{ up_to: null, unit_amount: '1' }, { up_to: null, unit_amount: '1' }], 'tiers[0].up_to'],
    ['last tier closed', [{ up_to: 10, unit_amount: '1' }, { up_to: 20, unit_amount: '1' }], 'tiers[1].up_to'],
    ['fractional up_to', [{ up_to: 10.5, unit_amount: '1' }, { up_to: null, unit_amount: '1' }], 'tiers[0].up_to'],
    ['zero up_to', [{ up_to: 0, unit_amount: '1' }, { up_to: null, unit_amount: '1' }], 'tiers[0].up_to'],
    ['string up_to', [{ up_to: '10', unit_amount: '1' }, { up_to: null, unit_amount: '1' }], 'tiers[0].up_to'],
    ['missing unit_amount', [{ up_to: 10, unit_amount: '1' }, { up_to: null }], 'tiers[1].unit_amount'],
    ['float unit_amount', [{ up_to: null, unit_amount: 0.01 }], 'tiers[0].unit_amount'],
    ['bad flat_amount', [{ up_to: null, unit_amount: '1', flat_amount: '1e2' }], 'tiers[0].flat_amount'],
    ['tier not an object', [{ up_to: 10, unit_amount: '1' }, null], 'tiers[1]'],
  ];
  for (const [name, tiers, field] of bad) {
    test(`rejects ${name} naming ${field}`, () => {
      assert.throws(() => validateTiers(tiers), isFieldError(field));
    });
  }

  test('uses the given field name, e.g. price_unit_tiers', () => {
    const tiers = [{ up_to: 5, unit_amount: '1' }, { up_to: 5, unit_amount: '1' }, { up_to: null, unit_amount: '1' }];
    assert.throws(() => validateTiers(tiers, 'price_unit_tiers'), isFieldError('price_unit_tiers[1].up_to'));
  });

  test('calculateAmount validates tiers before pricing', () => {
    const tiers = [{ up_to: 100, unit_amount: '1' }, { up_to: 50, unit_amount: '1' }, { up_to: null, unit_amount: '1' }];
    assert.throws(() => total(price('SLAB', tiers), '10'), isFieldError('tiers[1].up_to'));
    assert.throws(() => total(price('VOLUME', tiers), '10'), isFieldError('tiers[1].up_to'));
  });
});
