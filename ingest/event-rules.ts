// Rules JSON schema cannot state, checked after it and before anything is produced; a broken
// rule rejects the whole request with a 400 naming the field (`events[3].timestamp ...`).
//
// - Timestamps inside a window: not before INGEST_MIN_EVENT_TIME (2000-01-01), not more than
//   INGEST_MAX_FUTURE_MINUTES (5) ahead of the clock. Years like 0001, 1899, 2300 or 9999 used
//   to be accepted and landed in ClickHouse partitions no usage window reads correctly.
// - Numbers kept digit for digit: meters store values as Decimal(38, 12), and a meter created
//   later backfills from stored events, so ingest cannot know which properties will be
//   measured. Every numeric property value (any depth) must therefore fit: at most 26 integer
//   and 12 fractional digits. That covers JSON numbers (their shortest form: 0.1 + 0.2 is
//   0.30000000000000004 and is refused) and decimal strings with a point ("1.5"). Strings of
//   digits only are left alone: they are as often identifiers as quantities, and a meter
//   counts one that does not fit as skipped (meterline_aggregator_events_skipped_total).
import { ValidationError } from '../platform/errors.js'
import type { EventInput } from './event-schema.js'

export interface TimeWindow {
  minTime: Date
  maxFutureMinutes: number
  /** events older than this many days are refused (the dedup horizon); 0: no limit */
  maxAgeDays: number
}

const DECIMAL_WITH_POINT = /^\s*-?(\d+)\.(\d+)\s*$/
const INTEGER_DIGITS = 26
const FRACTION_DIGITS = 12

/** Why the decimal text `int.frac` does not fit Decimal(38, 12), if it does not. */
function decimalMisfit(intPart: string, fracPart: string): string | undefined {
  const intDigits = intPart.replace(/^0+/, '').length
  const fracDigits = fracPart.replace(/0+$/, '').length
  if (fracDigits > FRACTION_DIGITS) return `has ${fracDigits} decimal places; values are stored with at most ${FRACTION_DIGITS}, digit for digit, and are never rounded`
  if (intDigits > INTEGER_DIGITS) return `has ${intDigits} integer digits; values are stored with at most ${INTEGER_DIGITS}`
  return undefined
}

/** Plain positional digits of a finite JS number (String(1e-7) is "1e-7"). */
function numberParts(n: number): [string, string] {
  let text = String(Math.abs(n))
  if (/e/i.test(text)) {
    const [mantissa, exp] = text.toLowerCase().split('e')
    const [i, f = ''] = mantissa.split('.')
    const e = Number(exp)
    const digits = i + f
    const point = i.length + e
    text = point <= 0 ? `0.${'0'.repeat(-point)}${digits}` : point >= digits.length ? digits + '0'.repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`
  }
  const [i, f = ''] = text.split('.')
  return [i, f]
}

/** Why a property value cannot be stored exactly, if it cannot. */
export function numericMisfit(value: unknown): string | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return 'is not a finite number'
    return decimalMisfit(...numberParts(value))
  }
  if (typeof value === 'string') {
    const m = DECIMAL_WITH_POINT.exec(value)
    return m ? decimalMisfit(m[1], m[2]) : undefined
  }
  return undefined
}

function findMisfit(value: unknown, path: string): { path: string; reason: string } | undefined {
  const reason = numericMisfit(value)
  if (reason) return { path, reason }
  if (value === null || typeof value !== 'object') return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findMisfit(value[i], `${path}[${i}]`)
      if (bad) return bad
    }
    return undefined
  }
  for (const [k, v] of Object.entries(value)) {
    const bad = findMisfit(v, `${path}.${k}`)
    if (bad) return bad
  }
  return undefined
}

/** Throws a ValidationError for the first event breaking a rule; `prefix(i)` names the event. */
export function checkEvents(events: EventInput[], window: TimeWindow, nowMs: number, prefix: (i: number) => string): void {
  const latest = nowMs + window.maxFutureMinutes * 60_000
  // The acceptance window's edge is also the dedup horizon's (README, "Data lifecycle"): an
  // older event could be a copy of one whose key is forgotten, so it is refused.
  const earliest = window.maxAgeDays > 0 ? Math.max(window.minTime.getTime(), nowMs - window.maxAgeDays * 86_400_000) : window.minTime.getTime()
  for (let i = 0; i < events.length; i++) {
    const e = events[i]
    if (e.timestamp !== undefined) {
      const t = Date.parse(e.timestamp)
      if (Number.isNaN(t) || t < earliest || t > latest) {
        const field = `${prefix(i)}timestamp`
        const from = window.maxAgeDays > 0 && earliest > window.minTime.getTime()
          ? `${new Date(earliest).toISOString()} (${window.maxAgeDays} days ago: INGEST_MAX_EVENT_AGE_DAYS)`
          : window.minTime.toISOString()
        throw new ValidationError(
          `${field} must be between ${from} and ${window.maxFutureMinutes} minutes from now (${new Date(latest).toISOString()}), got "${e.timestamp}"`,
          field,
        )
      }
    }
    if (e.properties) {
      const bad = findMisfit(e.properties, `${prefix(i)}properties`)
      if (bad) throw new ValidationError(`${bad.path} ${bad.reason}; send it as a decimal string with at most 12 decimal places`, bad.path)
    }
  }
}
