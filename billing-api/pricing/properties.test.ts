// Property-style tests on random tier tables from a seeded PRNG (mulberry32):
// deterministic, and a failing case prints the quantity and tiers to replay it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Decimal } from 'decimal.js';
import { calculateAmount } from './calculate-amount.js';
import { D, roundMoney } from './money.js';
import { mulberry32, randDecimalString, randInt } from './prng.js';
import type { PriceDefinition, PriceTier } from './types.js';

const TRIALS = 150;
const SCALE = 10_000n; // unit amounts have <= 4 decimals, flat amounts <= 2

/** 1-5 tiers, ascending up_to, non-negative amounts, about half with a flat fee. */
function randomTiers(rand: () => number): PriceTier[] {
  const count = randInt(rand, 1, 5);
  const tiers: PriceTier[] = [];
  let upTo = 0;
  for (let i = 0; i < count; i++) {
    upTo += randInt(rand, 1, 1500);
    const tier: PriceTier = { up_to: i === count - 1 ? null : upTo, unit_amount: randDecimalString(rand, 1, 4) };
    if (rand() < 0.5) tier.flat_amount = randDecimalString(rand, 2, 2);
    tiers.push(tier);
  }
  return tiers;
}

const priced = (tier_mode: 'SLAB' | 'VOLUME', tiers: PriceTier[]): PriceDefinition => ({
  type: 'USAGE', billing_model: 'TIERED', tier_mode, currency: 'USD', tiers,
});
const lastBound = (tiers: PriceTier[]) => tiers.reduce((max, t) => Math.max(max, t.up_to ?? 0), 0);
const sum = (values: string[]): Decimal => values.reduce((acc: Decimal, v) => acc.plus(v), new D(0));

/** Decimal string with <= 4 decimals -> BigInt scaled by 10^4. */
function scaled(value = '0'): bigint {
  const [int, frac = ''] = value.split('.');
  return BigInt(int + frac.padEnd(4, '0'));
}

/** Slab total x 10^4 for an integer quantity, walking unit by unit in BigInt (no decimal.js). */
function slabByUnitWalk(tiers: PriceTier[], quantity: number): bigint {
  let total = 0n;
  let tier = 0;
  for (let unit = 1; unit <= quantity; unit++) {
    while (tiers[tier].up_to !== null && unit > tiers[tier].up_to!) tier++;
    total += scaled(tiers[tier].unit_amount);
  }
  let from = 0;
  for (const t of tiers) {
    if (quantity > from) total += scaled(t.flat_amount);
    from = t.up_to ?? Infinity;
  }
  return total;
}

const asScaled = (value: Decimal): bigint => {
  const times = value.times(SCALE.toString());
  assert.ok(times.isInteger(), `${value.toString()} has more than 4 decimals`);
  return BigInt(times.toFixed(0));
};

describe('SLAB properties', () => {
  test('(a) total equals the sum of breakdown amounts; breakdown quantities sum to the quantity', () => {
    const rand = mulberry32(0xa11ce);
    for (let i = 0; i < TRIALS * 4; i++) {
      const tiers = randomTiers(rand);
      const q = randDecimalString(rand, 4, 3);
      const result = calculateAmount(priced('SLAB', tiers), q);
      const context = `q=${q} tiers=${JSON.stringify(tiers)}`;
      assert.ok(sum(result.breakdown.map((l) => l.amount)).equals(result.unrounded), context);
      assert.ok(sum(result.breakdown.map((l) => l.quantity)).equals(q), context);
      assert.ok(result.amount.equals(roundMoney(result.unrounded, 'USD')), context);
    }
  });

  test('(b) total equals an independent unit-by-unit BigInt computation', () => {
    const rand = mulberry32(0xb0b);
    for (let i = 0; i < TRIALS; i++) {
      const tiers = randomTiers(rand);
      const q = randInt(rand, 0, lastBound(tiers) + 1500);
      const result = calculateAmount(priced('SLAB', tiers), String(q));
      assert.equal(asScaled(result.unrounded), slabByUnitWalk(tiers, q), `q=${q} tiers=${JSON.stringify(tiers)}`);
    }
  });

  test('(d) total is non-decreasing in quantity (non-negative amounts)', () => {
    const rand = mulberry32(0xd00d);
    for (let i = 0; i < TRIALS; i++) {
      const tiers = randomTiers(rand);
      const quantities = Array.from({ length: 40 }, () => new D(randDecimalString(rand, 4, 3)))
        .concat(tiers.flatMap((t) => (t.up_to === null ? [] : [new D(t.up_to), new D(t.up_to + 1)])))
        .sort((a, b) => a.comparedTo(b));
      let previous: Decimal = new D(0);
      for (const q of quantities) {
        const { unrounded } = calculateAmount(priced('SLAB', tiers), q);
        assert.ok(unrounded.gte(previous), `q=${q.toString()} ${unrounded.toString()} < ${previous.toString()} tiers=${JSON.stringify(tiers)}`);
        previous = unrounded;
      }
    }
  });
});

describe('VOLUME properties', () => {
  // (c) Documented boundary rule: up_to is inclusive. At q == up_to every unit is
  // priced at tier i; at up_to + 1 (or up_to + 0.001) every unit moves to tier i+1.
  test('(c) totals at up_to and up_to + 1 follow the inclusive boundary rule exactly', () => {
    const rand = mulberry32(0xc0de);
    for (let i = 0; i < TRIALS; i++) {
      const tiers = randomTiers(rand);
      const price = priced('VOLUME', tiers);
      tiers.forEach((tier, index) => {
        if (tier.up_to === null) return;
        const next = tiers[index + 1];
        const context = `boundary ${tier.up_to} tiers=${JSON.stringify(tiers)}`;
        const at = calculateAmount(price, String(tier.up_to));
        const above = calculateAmount(price, String(tier.up_to + 1));
        const justAbove = calculateAmount(price, `${tier.up_to}.001`);
        assert.equal(at.breakdown[0]?.tier, index, context);
        assert.equal(above.breakdown[0]?.tier, index + 1, context);
        assert.equal(justAbove.breakdown[0]?.tier, index + 1, context);
        const b = BigInt(tier.up_to);
        assert.equal(asScaled(at.unrounded), b * scaled(tier.unit_amount) + scaled(tier.flat_amount), context);
        assert.equal(asScaled(above.unrounded), (b + 1n) * scaled(next.unit_amount) + scaled(next.flat_amount), context);
      });
    }
  });

  test('(c) totals may DROP, but only when crossing an up_to', () => {
    const rand = mulberry32(0xfa11);
    let drops = 0;
    for (let i = 0; i < TRIALS; i++) {
      const tiers = randomTiers(rand);
      const bounds = new Set(tiers.map((t) => t.up_to));
      const price = priced('VOLUME', tiers);
      const candidates = [...bounds].filter((b): b is number => b !== null)
        .concat(Array.from({ length: 20 }, () => randInt(rand, 0, lastBound(tiers) + 500)));
      for (const q of candidates) {
        const here = calculateAmount(price, String(q)).unrounded;
        const next = calculateAmount(price, String(q + 1)).unrounded;
        if (next.lt(here)) {
          drops++;
          assert.ok(bounds.has(q), `drop from q=${q} to ${q + 1} inside a tier: tiers=${JSON.stringify(tiers)}`);
        }
      }
    }
    assert.ok(drops > 0, 'expected the random tier tables to exhibit at least one volume drop');
  });
});

describe('pricing unit property', () => {
  test('converted breakdown still sums to the total, which equals price_unit_amount x rate', () => {
    const rand = mulberry32(0x9e7);
    for (let i = 0; i < TRIALS; i++) {
      const conversion_rate = `0.${String(randInt(rand, 1, 999_999)).padStart(6, '0')}`;
      const price: PriceDefinition = {
        type: 'USAGE', billing_model: 'TIERED', tier_mode: rand() < 0.5 ? 'SLAB' : 'VOLUME', currency: 'USD',
        pricing_unit: { code: 'CREDIT', conversion_rate, base_currency: 'USD' },
        price_unit_tiers: randomTiers(rand),
      };
      const result = calculateAmount(price, randDecimalString(rand, 4, 2));
      assert.ok(result.price_unit_amount?.times(conversion_rate).equals(result.unrounded));
      assert.ok(sum(result.breakdown.map((l) => l.amount)).equals(result.unrounded));
    }
  });
});
