// One piece of a pricing description ("then $0.01 per call up to 10k") read into what it says:
// a recurring fee, a usage price (possibly one tier of several), a free allowance, a limit, a
// feature, a trial, or a modifier. Every word must be accounted for; the ones that are not are
// reported, so a description is never half-read in silence. Pure.
import type { Decimal } from 'decimal.js'
import type { BillingPeriod } from '../periods/periods.js'
import { isWord, items, type Item } from './tokens.js'
import { D } from '../pricing/index.js'
import { isLicense, sameUnit, unitOf, type Unit } from './units.js'

export interface TierMark {
  /** "first 1000": the tier ends at 1000 */
  first?: Decimal
  /** "next 9000": the tier ends 9000 after the previous one */
  next?: Decimal
  /** "up to 10k", "to 10k", "1k-10k": the tier ends at 10000 */
  upTo?: Decimal
  /** "after", "above 10k", "thereafter", "10k+": the tier is open-ended; `from` when a bound is written */
  open?: { from?: Decimal }
  /** "then": continues the tiers before it */
  then: boolean
}

export type Money = { amount: Decimal; currency: string | null; text: string }

export type Piece =
  | { kind: 'fixed'; text: string; money: Money; period: BillingPeriod | null; unit: Unit | null; note?: string }
  | { kind: 'usage'; text: string; money: Money; unit: Unit | null; per: Decimal | null; period: BillingPeriod | null; tier: TierMark | null }
  | { kind: 'free'; text: string; qty: Decimal; unit: Unit | null; period: BillingPeriod | null; tier: TierMark | null }
  | { kind: 'limit'; text: string; qty: Decimal; unit: Unit; period: BillingPeriod | null }
  | { kind: 'feature'; text: string; name: string }
  | { kind: 'trial'; text: string; days: number }
  | { kind: 'context'; text: string; period: BillingPeriod | null }
  | { kind: 'unknown'; text: string; words: string[] }

const PERIOD_NOUNS: Record<string, BillingPeriod> = {
  day: 'DAILY', days: 'DAILY', week: 'WEEKLY', wk: 'WEEKLY', weeks: 'WEEKLY', month: 'MONTHLY', months: 'MONTHLY', mo: 'MONTHLY',
  quarter: 'QUARTERLY', quarters: 'QUARTERLY', year: 'ANNUAL', years: 'ANNUAL', yr: 'ANNUAL', annum: 'ANNUAL',
}
const PERIOD_ADJECTIVES: Record<string, BillingPeriod> = {
  daily: 'DAILY', weekly: 'WEEKLY', monthly: 'MONTHLY', quarterly: 'QUARTERLY', annually: 'ANNUAL', annual: 'ANNUAL', yearly: 'ANNUAL',
  'one-time': 'ONETIME', onetime: 'ONETIME', once: 'ONETIME', setup: 'ONETIME', 'set-up': 'ONETIME', upfront: 'ONETIME', 'one-off': 'ONETIME',
}
const PER = new Set(['per', '/', 'each', 'every', 'a', 'an'])
const SCALE: Record<string, string> = { hundred: '100', thousand: '1000', million: '1000000', billion: '1000000000' }
const OPEN = new Set(['after', 'thereafter', 'beyond', 'above', 'over', 'afterwards', 'onwards', 'onward', '+', 'additional', 'remaining', 'extra', 'overage', 'more'])
const FREE = new Set(['free', 'included', 'includes', 'include', 'including', 'complimentary'])
const LIMIT = new Set(['limit', 'limited', 'max', 'maximum', 'most', 'cap', 'capped', 'upto'])
const FEATURE_LEAD = new Set(['includes', 'including', 'include', 'with', 'plus', '+', 'also', 'and'])
/** words that carry no information of their own here */
const FILLER = new Set([
  'then', 'and', 'the', 'a', 'an', 'is', 'are', 'at', 'of', 'for', 'with', 'plus', 'charged', 'billed', 'billing', 'pricing', 'price', 'priced',
  'cost', 'costs', 'pay', 'we', 'charge', 'you', 'your', 'it', 'usage', 'usage-based', 'based', 'fee', 'base', 'platform', 'subscription', 'flat',
  'fixed', 'rate', 'only', 'just', 'each', 'every', 'tier', 'tiers', 'tiered', 'graduated', 'volume', 'total', 'all', 'in', 'on', 'that', 'this',
  'be', 'will', 'plan', 'starting', 'starts', 'from', 'to', 'up', 'until', 'through', 'thru', 'at', '@', ':', '=', '(', ')', '-', 'per', 'cents',
  'cent', 'model', 'costing', 'which', 'first', 'next', 'there', 'after', 'recurring', 'unit', 'per-unit', 'metered', 'calls:', 'charges', 'license',
])
const UNIT_STOP = new Set([...PER, ...OPEN, ...FREE, ...LIMIT, 'up', 'to', 'then', 'for', 'at', 'from', 'is', 'are', 'and', 'or', 'with', 'billed',
  'plus', 'in', 'on', 'the', 'next', 'first', 'tier', '-', ':', '(', ')', '@', '=', 'through', 'until', 'thru', 'charged', 'cost', 'costs', 'over',
  ...Object.keys(PERIOD_NOUNS), ...Object.keys(PERIOD_ADJECTIVES), 'trial', 'fee', 'flat'])

interface Reader {
  its: Item[]
  used: Set<number>
}

const word = (r: Reader, i: number) => (r.its[i]?.kind === 'word' ? (r.its[i] as { w: string }).w : undefined)
const qtyAt = (r: Reader, i: number) => (r.its[i]?.kind === 'qty' ? (r.its[i] as { value: Decimal }).value : undefined)

/** Words naming a unit from index i on ("api calls", "gb of storage"); marks them used. */
function unitAt(r: Reader, i: number): Unit | null {
  const ws: string[] = []
  for (let j = i; j < r.its.length && ws.length < 4; j++) {
    const w = word(r, j)
    if (w === undefined || (UNIT_STOP.has(w) && !(w === 'of' && ws.length > 0))) break
    if (w === 'of' && !word(r, j + 1)) break
    ws.push(w)
    r.used.add(j)
  }
  if (ws[ws.length - 1] === 'of') ws.pop()
  return ws.length ? unitOf(ws) : null
}

/** "per 1000 tokens", "/ month", "a seat", "per million tokens" */
function perPhrases(r: Reader): { unit: Unit | null; per: Decimal | null; periods: BillingPeriod[] } {
  let unit: Unit | null = null
  let per: Decimal | null = null
  const periods: BillingPeriod[] = []
  for (let i = 0; i < r.its.length; i++) {
    const w = word(r, i)
    const lead = w !== undefined && PER.has(w) ? 1 : w === 'for' && isWord(r.its[i + 1], 'every', 'each') ? 2 : 0
    if (!lead) continue
    let j = i + lead
    // "per additional user", "per extra GB": the unit is what follows
    while (isWord(r.its[j], 'additional', 'extra')) j++
    const period = PERIOD_NOUNS[word(r, j) ?? '']
    if (period) {
      periods.push(period)
      for (let k = i; k <= j; k++) r.used.add(k)
      continue
    }
    let n = qtyAt(r, j)
    if (n !== undefined) j++
    const scale = SCALE[word(r, j) ?? '']
    if (scale) {
      n = (n ?? D(1)).times(scale)
      j++
    }
    if ((w === 'a' || w === 'an') && n !== undefined) continue
    const before = new Set(r.used)
    const u = unitAt(r, j)
    if (!u) continue
    if (unit) {
      // a second unit in one piece is not something we can price: leave it unread
      r.used = before
      continue
    }
    unit = u
    per = n ?? null
    for (let k = i; k < j; k++) r.used.add(k)
  }
  return { unit, per, periods }
}

function tierMark(r: Reader): TierMark | null {
  const mark: TierMark = { then: false }
  let any = false
  for (let i = 0; i < r.its.length; i++) {
    const w = word(r, i)
    const next = qtyAt(r, i + 1)
    if (w === 'then') {
      mark.then = any = true
      r.used.add(i)
    } else if (w === 'first' && next) {
      mark.first = next
      r.used.add(i).add(i + 1)
      any = true
    } else if (w === 'next' && next) {
      mark.next = next
      r.used.add(i).add(i + 1)
      any = true
    } else if ((w === 'to' || w === 'through' || w === 'until' || w === 'thru' || w === 'upto' || w === '-') && next) {
      mark.upTo = next
      r.used.add(i).add(i + 1)
      if (w === 'to' && isWord(r.its[i - 1], 'up')) r.used.add(i - 1)
      if (w === '-' && qtyAt(r, i - 1)) r.used.add(i - 1)
      if (qtyAt(r, i - 1) !== undefined && isWord(r.its[i - 2], 'from')) r.used.add(i - 1).add(i - 2)
      any = true
    } else if (w !== undefined && OPEN.has(w) && !r.used.has(i)) {
      r.used.add(i)
      any = true
      mark.open = mark.open ?? {}
      if (next) {
        mark.open.from = next
        r.used.add(i + 1)
      } else if (qtyAt(r, i - 1) && (w === '+' || isWord(r.its[i + 1], 'and'))) {
        mark.open.from = qtyAt(r, i - 1)
        r.used.add(i - 1)
      }
      if (w === 'more' && isWord(r.its[i + 1], 'than')) r.used.add(i + 1)
    } else if (w === 'and' && isWord(r.its[i + 1], 'above', 'up', 'over', 'beyond') && qtyAt(r, i - 1)) {
      mark.open = { from: qtyAt(r, i - 1) }
      r.used.add(i - 1).add(i).add(i + 1)
      if (isWord(r.its[i + 1], 'up')) r.used.add(i + 2)
      any = true
      i++
    }
  }
  // "after the first 1M requests": open-ended from that bound, not a first tier
  if (mark.open && mark.first && !mark.open.from) {
    mark.open.from = mark.first
    delete mark.first
  }
  return any ? mark : null
}

function standalonePeriods(r: Reader): BillingPeriod[] {
  const out: BillingPeriod[] = []
  r.its.forEach((it, i) => {
    if (it.kind !== 'word') return
    const p = PERIOD_ADJECTIVES[it.w] ?? (it.w === 'one' && isWord(r.its[i + 1], 'time') ? 'ONETIME' : undefined)
    if (p) {
      out.push(p)
      r.used.add(i)
      if (it.w === 'one') r.used.add(i + 1)
    }
  })
  return out
}

function trialDays(r: Reader): number | null {
  const at = r.its.findIndex((it) => isWord(it, 'trial'))
  if (at < 0) return null
  for (let i = 0; i < r.its.length - 1; i++) {
    const n = qtyAt(r, i)
    const unit = word(r, i + 1)
    const days = unit === 'day' || unit === 'days' ? 1 : unit === 'week' || unit === 'weeks' ? 7 : unit === 'month' || unit === 'months' ? 30 : 0
    if (n && days && n.isInteger()) {
      r.its.forEach((it, k) => {
        if (it.kind === 'word' && ['trial', 'free', 'day', 'days', 'week', 'weeks', 'month', 'months', 'of'].includes(it.w)) r.used.add(k)
      })
      r.used.add(i)
      return n.toNumber() * days
    }
  }
  return null
}

function unused(r: Reader): string[] {
  return r.its.flatMap((it, i) => {
    if (r.used.has(i)) return []
    if (it.kind === 'word') return FILLER.has(it.w) ? [] : [it.w]
    return [it.text]
  })
}

function single<T>(values: T[]): T | null {
  return values.length ? values[0] : null
}

/** `featureMode`: the previous piece listed features, so a bare name is one more. */
export function readPiece(text: string, featureMode: boolean): Piece {
  const r: Reader = { its: items(text), used: new Set() }
  if (!r.its.length) return { kind: 'context', text, period: null }
  const unknown = (): Piece => ({ kind: 'unknown', text, words: unused(r) })

  const days = trialDays(r)
  if (days !== null) return unused(r).length ? unknown() : { kind: 'trial', text, days }

  // "0.01 per event": a bare amount priced per something is money in a currency not written
  if (!r.its.some((it) => it.kind === 'money')) {
    const bare = r.its.findIndex((it, i) => it.kind === 'qty' && isWord(r.its[i + 1], 'per', '/') && !PERIOD_NOUNS[word(r, i + 2) ?? ''] || (it.kind === 'qty' && isWord(r.its[i + 1], 'per', '/') && i === 0))
    if (bare >= 0) {
      const q = r.its[bare] as Extract<Item, { kind: 'qty' }>
      r.its[bare] = { kind: 'money', amount: q.value, currency: null, text: q.text }
    }
  }
  const moneyAt = r.its.flatMap((it, i) => (it.kind === 'money' ? [i] : []))
  if (moneyAt.length > 1) return { kind: 'unknown', text, words: moneyAt.map((i) => (r.its[i] as { text: string }).text) }
  const qtys = () => r.its.flatMap((it, i) => (it.kind === 'qty' && !r.used.has(i) ? [i] : []))

  if (moneyAt.length === 1) {
    const m = r.its[moneyAt[0]] as Extract<Item, { kind: 'money' }>
    r.used.add(moneyAt[0])
    const money: Money = { amount: m.amount, currency: m.currency, text: m.text }
    const { unit, per, periods } = perPhrases(r)
    periods.push(...standalonePeriods(r))
    const tier = tierMark(r)
    // "Calls 1-1000: $0.01 per call": the unit named again as a label
    r.its.forEach((it, i) => {
      if (unit && it.kind === 'word' && !r.used.has(i) && sameUnit(unitOf([it.w]), unit)) r.used.add(i)
    })
    // money and "free" in one piece ("$0 free"?) is not something to guess at
    if (r.its.some((it) => isWord(it, 'free'))) return unknown()
    if (unused(r).length) return unknown()
    if ((unit && !isLicense(unit)) || tier) return { kind: 'usage', text, money, unit, per, period: single(periods), tier }
    if (periods.length === 2 && periods[0] !== periods[1]) return billedOver(text, money, unit, periods[0], periods[1]) ?? unknown()
    return { kind: 'fixed', text, money, period: single(periods), unit }
  }

  // No money: a free allowance, a limit, a feature or a modifier.
  const tier = tierMark(r)
  const periods = perPhrases(r).periods
  periods.push(...standalonePeriods(r))
  const freeAt = r.its.findIndex((it, i) => it.kind === 'word' && FREE.has(it.w) && !r.used.has(i))
  const limitAt = r.its.findIndex((it) => it.kind === 'word' && LIMIT.has(it.w))
  const bound = tier?.first ?? tier?.upTo ?? tier?.next
  const free = qtys()
  if (freeAt >= 0 && (free.length || bound)) {
    r.used.add(freeAt)
    let qty = bound
    if (!qty) {
      qty = qtyAt(r, free[0])!
      r.used.add(free[0])
    }
    // the unit follows the quantity, possibly after "free"
    const qIndex = r.its.findIndex((it) => it.kind === 'qty' && it.value.eq(qty!))
    let j = qIndex + 1
    while (isWord(r.its[j], 'free', 'included')) r.used.add(j++)
    // "1000 API calls free" or "includes 10,000 API calls"
    const unit = unitAt(r, j) ?? unitAt(r, freeAt + 1)
    if (unused(r).length) return unknown()
    return { kind: 'free', text, qty, unit, period: single(periods), tier }
  }
  if (free.length === 1 || ((limitAt >= 0 || tier?.upTo) && bound)) {
    const qIndex = free.length === 1 ? free[0] : r.its.findIndex((it) => it.kind === 'qty' && it.value.eq(bound!))
    r.used.add(qIndex)
    if (limitAt >= 0) r.used.add(limitAt)
    const unit = unitAt(r, qIndex + 1)
    if (!unit || unused(r).length) return unknown()
    return { kind: 'limit', text, qty: qtyAt(r, qIndex)!, unit, period: single(periods) }
  }
  if (tier || free.length) return unknown()

  const ws = r.its.map((it) => (it.kind === 'word' ? it.w : ''))
  const lead = FEATURE_LEAD.has(ws[0]) && ws.length > 1
  if (lead || featureMode) {
    const nameWords = (lead ? ws.slice(1) : ws).filter((w) => w !== '')
    if (nameWords.length && nameWords.length <= 6 && !nameWords.some((w) => FILLER.has(w) && !['and', 'of', 'the', 'for', 'with'].includes(w) && w !== 'a')) {
      return { kind: 'feature', text, name: nameWords.join(' ') }
    }
  }
  if (unused(r).length) return unknown()
  return { kind: 'context', text, period: single(periods) }
}

const MONTHS_IN: Partial<Record<BillingPeriod, number>> = { MONTHLY: 1, QUARTERLY: 3, HALF_YEARLY: 6, ANNUAL: 12 }
const UNIT_OF: Partial<Record<BillingPeriod, string>> = { MONTHLY: 'month', QUARTERLY: 'quarter', HALF_YEARLY: 'half-year', ANNUAL: 'year' }

/** "$99 per month billed annually": the price of the longer period, 99 x 12 = 1188 per year. */
function billedOver(text: string, money: Money, unit: Unit | null, per: BillingPeriod, billed: BillingPeriod): Piece | null {
  const [from, to] = [MONTHS_IN[per], MONTHS_IN[billed]]
  if (!from || !to || to <= from || to % from !== 0) return null
  const amount = money.amount.times(to / from)
  return {
    kind: 'fixed', text, unit, period: billed, money: { ...money, amount },
    note: `"${text}": ${money.amount.toString()} a ${UNIT_OF[per]} billed once a ${UNIT_OF[billed]} is ${amount.toString()} a ${UNIT_OF[billed]}`,
  }
}
