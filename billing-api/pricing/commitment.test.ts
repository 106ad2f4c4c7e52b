import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyCommitment, applySharedCommitment, applyWindowedCommitment, settleCommitment, type CommitmentSplit } from './commitment.js';
import { checkTimeBuckets, commitmentWindows, type TimeBucket } from './commitment-windows.js';
import { D, PricingInputError } from './money.js';

const isFieldError = (field: string) => (err: unknown) => err instanceof PricingInputError && err.field === field;
const parts = (s: CommitmentSplit) => [s.utilized.toString(), s.overage.toString(), s.true_up.toString()];

describe('applyCommitment (commitment 100.00, overage factor 1.5)', () => {
  const terms = (trueUp: boolean) => ({ amount: '100', overage_factor: '1.5', true_up_enabled: trueUp });
  test('under the commitment, no true-up: 60 is all utilized, nothing else', () => {
    assert.deepEqual(parts(applyCommitment('60', terms(false))), ['60', '0', '0']);
  });
  test('under the commitment, true-up: 60 utilized + 40 true-up = 100', () => {
    assert.deepEqual(parts(applyCommitment('60', terms(true))), ['60', '0', '40']);
  });
  test('exactly at the commitment: 100 utilized, no overage, no true-up', () => {
    assert.deepEqual(parts(applyCommitment('100', terms(true))), ['100', '0', '0']);
  });
  test('over the commitment: 130 -> 100 utilized + 30 x 1.5 = 45 overage', () => {
    assert.deepEqual(parts(applyCommitment('130', terms(true))), ['100', '45', '0']);
  });
  test('overage factor 1 charges the excess at the normal price', () => {
    assert.deepEqual(parts(applyCommitment('130', { amount: '100', overage_factor: '1', true_up_enabled: false })), ['100', '30', '0']);
  });
  test('no usage with true-up: the whole commitment is true-up', () => {
    assert.deepEqual(parts(applyCommitment('0', terms(true))), ['0', '0', '100']);
  });
  test('factor below 1, a negative commitment or negative usage are refused', () => {
    assert.throws(() => applyCommitment('1', { amount: '100', overage_factor: '0.9', true_up_enabled: false }), isFieldError('overage_factor'));
    assert.throws(() => applyCommitment('1', { amount: '-1', overage_factor: '1', true_up_enabled: false }), isFieldError('commitment_amount'));
    assert.throws(() => applyCommitment('-1', terms(false)), isFieldError('usage'));
  });
});

describe('applyWindowedCommitment (10.00 per window, factor 2)', () => {
  // windows 4, 10, 15, 0: utilized 4 + 10 + 10 + 0 = 24; overage (15 - 10) x 2 = 10;
  // true-up (10 - 4) + 0 + 0 + (10 - 0) = 16
  const windows = ['4', '10', '15', '0'];
  test('true-up on: 24 utilized + 10 overage + 16 true-up', () => {
    assert.deepEqual(parts(applyWindowedCommitment(windows, { amount: '10', overage_factor: '2', true_up_enabled: true })), ['24', '10', '16']);
  });
  test('true-up off: 24 utilized + 10 overage', () => {
    assert.deepEqual(parts(applyWindowedCommitment(windows, { amount: '10', overage_factor: '2', true_up_enabled: false })), ['24', '10', '0']);
  });
  test('differs from one period-wide commitment of the same total (29 against 40)', () => {
    // non-windowed: 29 usage against 40 -> 29 utilized, 11 true-up
    assert.deepEqual(parts(applyCommitment('29', { amount: '40', overage_factor: '2', true_up_enabled: true })), ['29', '0', '11']);
  });
});

describe('applySharedCommitment (subscription commitment across lines, in line order)', () => {
  test('100 over lines 70, 50, 20 at factor 1.2: line 2 fills it, the rest is overage', () => {
    const splits = applySharedCommitment(['70', '50', '20'], { amount: '100', overage_factor: '1.2', true_up_enabled: true });
    // line 2: 30 utilized, (50 - 30) x 1.2 = 24; line 3: 20 x 1.2 = 24
    assert.deepEqual(splits.map(parts), [['70', '0', '0'], ['30', '24', '0'], ['0', '24', '0']]);
  });
  test('under it with true-up: the unused 50 goes on the first line', () => {
    const splits = applySharedCommitment(['30', '20'], { amount: '100', overage_factor: '1.2', true_up_enabled: true });
    assert.deepEqual(splits.map(parts), [['30', '0', '50'], ['20', '0', '0']]);
  });
});

describe('settleCommitment: every part rounded once, the amount is their sum', () => {
  test('12.345 against 10.00 at 1.5: 10.00 + 3.5175 -> 3.52 = 13.52', () => {
    const split = applyCommitment('12.345', { amount: '10', overage_factor: '1.5', true_up_enabled: false });
    const { amount, info } = settleCommitment(split, 'USD', { amount: '10', quantity: null, overage_factor: '1.5', is_windowed: false, true_up_enabled: false });
    assert.equal(amount.toString(), '13.52');
    assert.deepEqual(info, {
      amount: '10.00', quantity: null, overage_factor: '1.5', computed_commitment_utilized_amount: '10.00',
      computed_overage_amount: '3.52', computed_true_up_amount: '0.00', is_windowed: false, true_up_enabled: false,
    });
  });
  test('each part rounds on its own: 0.004 + 0.004 + 0.004 -> 0.00 each, amount 0 (not 0.01)', () => {
    const split = { utilized: new D('0.004'), overage: new D('0.004'), true_up: new D('0.004') };
    const { amount, info } = settleCommitment(split, 'USD', { amount: null, quantity: '5', overage_factor: '1', is_windowed: true, true_up_enabled: true });
    assert.equal(amount.toString(), '0');
    assert.equal(info.computed_true_up_amount, '0.00');
    assert.equal(info.quantity, '5');
  });
});

describe('commitmentWindows (UTC)', () => {
  const iso = (ws: { start: Date; end: Date }[]) => ws.map((w) => `${w.start.toISOString()} ${w.end.toISOString()}`);
  test('days, the first clipped to the period start', () => {
    assert.deepEqual(iso(commitmentWindows(new Date('2026-01-01T12:00:00Z'), new Date('2026-01-03T00:00:00Z'), null)), [
      '2026-01-01T12:00:00.000Z 2026-01-02T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z 2026-01-03T00:00:00.000Z',
    ]);
  });
  test('time buckets per day; a bucket wholly before the period start is dropped', () => {
    const buckets: TimeBucket[] = [{ start: { hour: 8, minute: 0 }, end: { hour: 24, minute: 0 } }, { start: { hour: 0, minute: 0 }, end: { hour: 8, minute: 0 } }];
    assert.deepEqual(iso(commitmentWindows(new Date('2026-01-01T12:00:00Z'), new Date('2026-01-03T00:00:00Z'), buckets)), [
      '2026-01-01T12:00:00.000Z 2026-01-02T00:00:00.000Z',
      '2026-01-02T00:00:00.000Z 2026-01-02T08:00:00.000Z',
      '2026-01-02T08:00:00.000Z 2026-01-03T00:00:00.000Z',
    ]);
  });
  test('a 31-day month has 31 day windows', () => {
    assert.equal(commitmentWindows(new Date('2026-01-01T00:00:00Z'), new Date('2026-02-01T00:00:00Z'), null).length, 31);
  });
});

describe('checkTimeBuckets', () => {
  const b = (sh: number, sm: number, eh: number, em: number): TimeBucket => ({ start: { hour: sh, minute: sm }, end: { hour: eh, minute: em } });
  const fails = (buckets: TimeBucket[], granularity: 'HOUR' | 'MINUTE', field: string, text: RegExp) =>
    assert.throws(() => checkTimeBuckets(buckets, granularity), (err: unknown) => isFieldError(field)(err) && text.test((err as Error).message));
  test('a complete, non-overlapping tiling passes, in any order', () => {
    checkTimeBuckets([b(12, 0, 24, 0), b(0, 0, 12, 0)], 'HOUR');
    checkTimeBuckets([b(0, 0, 9, 30), b(9, 30, 24, 0)], 'MINUTE');
  });
  test('overlap names both buckets', () => fails([b(0, 0, 12, 0), b(10, 0, 24, 0)], 'HOUR', 'commitment_time_buckets[1]', /10:00-24:00 overlaps commitment_time_buckets\[0\] \(00:00-12:00\)/));
  test('a gap names the bucket after it', () => fails([b(0, 0, 12, 0), b(13, 0, 24, 0)], 'HOUR', 'commitment_time_buckets[1]', /12:00-13:00 uncovered/));
  test('a missing end of day names the last bucket', () => fails([b(0, 0, 12, 0), b(12, 0, 20, 0)], 'HOUR', 'commitment_time_buckets[1]', /20:00-24:00 uncovered/));
  test('a missing start of day', () => fails([b(6, 0, 24, 0)], 'HOUR', 'commitment_time_buckets[0]', /00:00-06:00 uncovered/));
  test('an hour-only meter refuses a minute', () => fails([b(0, 0, 9, 30), b(9, 30, 24, 0)], 'HOUR', 'commitment_time_buckets[0]', /not on the hour/));
  test('end before start, 24:00 as a start, 25:00', () => {
    fails([b(12, 0, 6, 0)], 'HOUR', 'commitment_time_buckets[0]', /must end after it starts/);
    fails([b(24, 0, 24, 0)], 'HOUR', 'commitment_time_buckets[0]', /not a time of day/);
    fails([b(0, 0, 25, 0)], 'HOUR', 'commitment_time_buckets[0]', /not a time of day/);
  });
  test('an empty list is refused', () => fails([], 'HOUR', 'commitment_time_buckets', /at least one/));
});
