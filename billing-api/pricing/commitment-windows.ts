import { PricingInputError } from './money.js';

/**
 * Windows of a windowed commitment (pure date math, UTC). Without time buckets a window is a
 * UTC day; with buckets it is one bucket of one UTC day. Windows are clipped to the billing
 * period; a clipped window carries its share (whole seconds), by which its commitment is prorated.
 */
export interface TimeOfDay {
  hour: number;
  minute: number;
}
export interface TimeBucket {
  start: TimeOfDay;
  end: TimeOfDay;
}
/** The meter's bucket size: HOUR buckets start and end on the hour; MINUTE on any minute. */
export type BucketGranularity = 'HOUR' | 'MINUTE';

export interface Window {
  start: Date;
  end: Date;
  /** a window clipped by the period boundary: its length and the full window's, in seconds */
  share?: { seconds: number; of: number };
}

const DAY_MS = 86_400_000;
const minutes = (t: TimeOfDay) => t.hour * 60 + t.minute;
const hhmm = (t: TimeOfDay) => `${String(t.hour).padStart(2, '0')}:${String(t.minute).padStart(2, '0')}`;
const label = (b: TimeBucket) => `${hhmm(b.start)}-${hhmm(b.end)}`;

/**
 * Time buckets must tile the day: each ends after it starts (24:00 is the end of the day),
 * none overlaps another, together they cover 00:00-24:00 without a gap, and each boundary is
 * aligned to the meter's granularity (an hour-only meter refuses a non-zero minute).
 * Throws PricingInputError naming the bucket (`commitment_time_buckets[i]`, request order).
 */
export function checkTimeBuckets(buckets: TimeBucket[], granularity: BucketGranularity): void {
  if (buckets.length === 0) throw new PricingInputError('commitment_time_buckets', 'must hold at least one bucket when given');
  buckets.forEach((b, i) => {
    const field = `commitment_time_buckets[${i}]`;
    for (const [side, t] of [['start', b.start], ['end', b.end]] as const) {
      if (!Number.isInteger(t.hour) || !Number.isInteger(t.minute) || t.minute < 0 || t.minute > 59 || t.hour < 0 || t.hour > 24
        || (t.hour === 24 && (side === 'start' || t.minute !== 0))) {
        throw new PricingInputError(field, `${side} ${t.hour}:${t.minute} is not a time of day (00:00 to 24:00; 24:00 only as an end)`);
      }
      if (granularity === 'HOUR' && t.minute !== 0) {
        throw new PricingInputError(field, `${side} ${hhmm(t)} is not on the hour; the meter's buckets are hours, so minute must be 0`);
      }
    }
    if (minutes(b.end) <= minutes(b.start)) throw new PricingInputError(field, `bucket ${label(b)} must end after it starts`);
  });
  const order = buckets.map((b, i) => ({ b, i })).sort((x, y) => minutes(x.b.start) - minutes(y.b.start));
  let covered = 0;
  let previous: { b: TimeBucket; i: number } | null = null;
  for (const cur of order) {
    const field = `commitment_time_buckets[${cur.i}]`;
    const start = minutes(cur.b.start);
    if (previous && start < covered) {
      throw new PricingInputError(field, `bucket ${label(cur.b)} overlaps commitment_time_buckets[${previous.i}] (${label(previous.b)})`);
    }
    if (start > covered) {
      throw new PricingInputError(field, `the buckets leave ${hhmm({ hour: Math.floor(covered / 60), minute: covered % 60 })}-${hhmm(cur.b.start)} uncovered before bucket ${label(cur.b)}; buckets must cover the whole day`);
    }
    covered = minutes(cur.b.end);
    previous = cur;
  }
  if (covered < 24 * 60) {
    throw new PricingInputError(`commitment_time_buckets[${previous!.i}]`, `the buckets leave ${hhmm({ hour: Math.floor(covered / 60), minute: covered % 60 })}-24:00 uncovered after bucket ${label(previous!.b)}; buckets must cover the whole day`);
  }
}

/** The windows covering [start, end), in time order. Buckets are assumed valid (checkTimeBuckets). */
export function commitmentWindows(start: Date, end: Date, buckets: TimeBucket[] | null): Window[] {
  const offsets = (buckets && buckets.length ? [...buckets] : [{ start: { hour: 0, minute: 0 }, end: { hour: 24, minute: 0 } }])
    .map((b) => [minutes(b.start) * 60_000, minutes(b.end) * 60_000] as const)
    .sort((a, b) => a[0] - b[0]);
  const windows: Window[] = [];
  for (let day = Math.floor(start.getTime() / DAY_MS) * DAY_MS; day < end.getTime(); day += DAY_MS) {
    for (const [from, to] of offsets) {
      const s = Math.max(day + from, start.getTime());
      const e = Math.min(day + to, end.getTime());
      if (s >= e) continue;
      const full = (to - from) / 1000;
      const part = Math.floor(e / 1000) - Math.floor(s / 1000);
      windows.push({ start: new Date(s), end: new Date(e), ...(part < full ? { share: { seconds: part, of: full } } : {}) });
    }
  }
  return windows;
}
