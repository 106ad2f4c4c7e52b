import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Decimal } from 'decimal.js';
import { currencyPrecision, D, parseDecimal, PricingInputError, roundMoney, toMoneyString } from './money.js';
import { mulberry32, randDecimalString, randInt } from './prng.js';

const isFieldError = (field: string) => (err: unknown) =>
  err instanceof PricingInputError && err.field === field;

describe('currencyPrecision', () => {
  test('ISO 4217 minor units, case-insensitive, 2 by default', () => {
    for (const c of ['USD', 'usd', 'EUR', 'GBP', 'INR', 'ZZZ']) assert.equal(currencyPrecision(c), 2, c);
    for (const c of ['JPY', 'KRW', 'VND', 'CLP', 'ISK', 'UGX', 'XAF', 'XOF', 'PYG', 'jpy']) {
      assert.equal(currencyPrecision(c), 0, c);
    }
    for (const c of ['BHD', 'JOD', 'KWD', 'OMR', 'TND', 'IQD', 'LYD']) assert.equal(currencyPrecision(c), 3, c);
    assert.equal(currencyPrecision('CLF'), 4);
  });

  test('rejects anything but a 3-letter code', () => {
    for (const c of ['', 'US', 'USDT', 'U$D', ' USD']) {
      assert.throws(() => currencyPrecision(c), isFieldError('currency'), c);
    }
  });
});

describe('roundMoney: half-up, away from zero on ties', () => {
  const cases: [string, string, string][] = [
    // [amount, currency, expected]
    ['1.005', 'USD', '1.01'], // the float 1.005 is 1.00499999..., a float engine would say 1.00
    ['2.675', 'USD', '2.68'],
    ['1.004', 'USD', '1'],
    ['-1.005', 'USD', '-1.01'],
    ['0.5', 'JPY', '1'],
    ['1.5', 'JPY', '2'],
    ['2.5', 'JPY', '3'], // banker's rounding would give 2
    ['-2.5', 'JPY', '-3'],
    ['1199.5', 'JPY', '1200'],
    ['1199.4999', 'JPY', '1199'],
    ['1.2345', 'KWD', '1.235'],
    ['1.2344', 'KWD', '1.234'],
    ['-0.0005', 'KWD', '-0.001'],
    ['0.0004', 'BHD', '0'],
  ];
  for (const [amount, currency, expected] of cases) {
    test(`${amount} ${currency} -> ${expected}`, () => {
      const rounded = roundMoney(new D(amount), currency);
      assert.ok(rounded instanceof D);
      assert.equal(rounded.toString(), expected);
    });
  }

  test('never returns negative zero', () => {
    const rounded = roundMoney(new D('-0.004'), 'USD');
    assert.equal(rounded.isNegative(), false);
    assert.equal(toMoneyString(rounded, 'USD'), '0.00');
  });

  test('accepts a Decimal from another constructor and returns one of D', () => {
    assert.ok(roundMoney(new Decimal('3.335'), 'USD').equals('3.34'));
  });

  // Property (e): for random amounts, toMoneyString equals a half-up rounding done
  // independently on the digit string with BigInt.
  test('property: matches an independent BigInt half-up for JPY, USD, KWD', () => {
    const rand = mulberry32(0xe5e5);
    for (let i = 0; i < 2000; i++) {
      const negative = rand() < 0.3;
      const amount = (negative ? '-' : '') + randDecimalString(rand, randInt(rand, 1, 7), 6);
      for (const currency of ['JPY', 'USD', 'KWD']) {
        const places = currencyPrecision(currency);
        assert.equal(toMoneyString(amount, currency), bigintHalfUp(amount, places), `${amount} ${currency}`);
      }
    }
  });
});

/** Half-up rounding of a decimal string to `places`, on scaled BigInts. */
function bigintHalfUp(value: string, places: number): string {
  const negative = value.startsWith('-');
  const [int, frac = ''] = value.replace('-', '').split('.');
  // Keep one digit past `places`: for half-up, later digits cannot change the outcome.
  const digits = BigInt(int + frac.padEnd(places + 1, '0').slice(0, places + 1));
  let scaled = digits / 10n;
  if (digits % 10n >= 5n) scaled += 1n;
  const text = scaled.toString().padStart(places + 1, '0');
  const out = places === 0 ? text : `${text.slice(0, -places)}.${text.slice(-places)}`;
  return negative && scaled !== 0n ? `-${out}` : out;
}

describe('toMoneyString', () => {
  test('prints exactly the currency decimals', () => {
    assert.equal(toMoneyString(new D('12.3'), 'USD'), '12.30');
    assert.equal(toMoneyString('1200', 'JPY'), '1200');
    assert.equal(toMoneyString('1199.5', 'JPY'), '1200');
    assert.equal(toMoneyString('5', 'KWD'), '5.000');
    assert.equal(toMoneyString('0.0005', 'BHD'), '0.001');
    assert.equal(toMoneyString('1234567890123456789.005', 'USD'), '1234567890123456789.01');
  });

  test('rejects a non-decimal string', () => {
    assert.throws(() => toMoneyString('1e3', 'USD'), isFieldError('amount'));
  });
});

describe('parseDecimal', () => {
  test('accepts decimal strings, bigints, safe integers and Decimals', () => {
    assert.equal(parseDecimal('0', 'x').toString(), '0');
    assert.equal(parseDecimal('-0.5', 'x').toString(), '-0.5');
    assert.equal(parseDecimal('007.10', 'x').toString(), '7.1');
    assert.equal(parseDecimal('0.0000001', 'x').toString(), '0.0000001'); // no exponent notation
    assert.equal(parseDecimal(12n, 'x').toString(), '12');
    assert.equal(parseDecimal(-3, 'x').toString(), '-3');
    assert.equal(parseDecimal(Number.MAX_SAFE_INTEGER, 'x').toString(), '9007199254740991');
    assert.equal(parseDecimal(new Decimal('1.25'), 'x').toString(), '1.25');
    assert.ok(parseDecimal('1', 'x') instanceof D);
    assert.equal(parseDecimal('-0', 'x').isNegative(), false);
  });

  test('rejects floats, exponents, signs, blanks and non-strings, naming the field', () => {
    const bad: unknown[] = [
      0.1, 1.5, NaN, Infinity, 2 ** 53, '1e3', '+1', ' 1', '1 ', '1.', '.5', '', '1,000', '0x10', '--1',
      null, undefined, {}, [], true, new Decimal(NaN), new Decimal(Infinity),
    ];
    for (const value of bad) {
      assert.throws(() => parseDecimal(value, 'tiers[0].unit_amount'), isFieldError('tiers[0].unit_amount'), String(value));
    }
  });
});

describe('D', () => {
  test('is a 50-digit, half-up clone that leaves the global Decimal alone', () => {
    assert.equal(D.precision, 50);
    assert.equal(D.rounding, Decimal.ROUND_HALF_UP);
    assert.equal(new D(1).div(3).toString(), `0.${'3'.repeat(50)}`);
    assert.equal(new D(2).div(3).toString(), `0.${'6'.repeat(49)}7`);
    assert.notEqual(Decimal.precision, 50);
  });
});
