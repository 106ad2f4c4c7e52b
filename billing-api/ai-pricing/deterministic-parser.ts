// The rule-based reader of pricing descriptions: pieces (pieces.ts) in, catalog configurations
// (parsed-pricing.ts) out. Usage pieces that continue one another ("first 1000 free, then $0.01
// per call up to 10k, $0.005 after") become one tiered price; tiers are graduated (SLAB) unless
// the text says "volume". Anything it cannot read is a ValidationError that quotes it. Pure.
import type { Decimal } from 'decimal.js'
import { ValidationError } from '../../platform/errors.js'
import type { UsageResetPeriod } from '../entitlements/entitlement.entity.js'
import type { BillingPeriod } from '../periods/periods.js'
import { D } from '../pricing/index.js'
import type { ParsedEntitlement, ParsedFeature, ParsedMeter, ParsedPrice, ParsedPricing } from './parsed-pricing.js'
import { readPiece, type Money, type Piece } from './pieces.js'
import { booleanFeatureFor, meterFor, meteredFeatureFor, moreSpecific, sameUnit, slug, type Unit } from './units.js'

export const MAX_DESCRIPTION_LENGTH = 2000

interface Tier {
  upTo: Decimal | null
  money: Money
  per: Decimal | null
  text: string
}

interface Group {
  unit: Unit | null
  tiers: Tier[]
  /** one usage price without tier words: a later "after N" piece may still bound it */
  soft: boolean
  period: BillingPeriod | null
  text: string
}

const PLAN_NAME = /^\s*(?:the\s+)?([A-Za-z0-9][\w.&' -]{0,60}?)\s+plan\s*(?:[:\-–—,(]|\bis\b|\bcosts?\b|\bat\b)\s*/i
const ZERO: Money = { amount: D(0), currency: null, text: 'free' }
const RESET: Partial<Record<BillingPeriod, UsageResetPeriod>> = { DAILY: 'DAILY', WEEKLY: 'WEEKLY', MONTHLY: 'MONTHLY', ANNUAL: 'YEARLY' }

const fail = (message: string) => new ValidationError(message, 'description')
const quote = (s: string) => `"${s.trim()}"`
const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

function splitPieces(text: string): string[] {
  return text
    .split(/[;\n]+|(?<!\d)\.(?!\d)|\.(?=\s|$)|,(?!\d{3})|\s\+\s|\bplus\b|\band\b(?!\s+(?:above|up|over|beyond)\b)|\bor\b|\bbut\b|(?=\bthen\b)/i)
    .map((s) => s.trim())
    .filter((s) => s !== '' && !/^(and|then|but)$/i.test(s))
}

function integer(v: Decimal, what: string): number {
  if (!v.isInteger() || v.lte(0) || v.gt(Number.MAX_SAFE_INTEGER)) throw fail(`${what} must be a whole number above 0, not ${v.toString()}`)
  return v.toNumber()
}

/** the per-unit amount of a tier; "$5 per 1000" is 0.005 per unit, and must be exact */
function unitAmount(t: Tier): string {
  if (!t.per) return t.money.amount.toString()
  const each = t.money.amount.div(t.per)
  if (each.decimalPlaces() > 12 || !each.times(t.per).eq(t.money.amount)) {
    throw fail(`${quote(t.text)}: ${t.money.text} per ${t.per.toString()} is not an exact amount per unit, so it cannot be a tier price`)
  }
  return each.toString()
}

export function parsePricingDescription(description: string): ParsedPricing {
  const { text, planName, body, pieces } = readDescription(description)
  const warnings: string[] = []
  const currency = currencyOf(pieces, warnings)
  const contextPeriod = pieces.find((p): p is Extract<Piece, { kind: 'context' }> => p.kind === 'context' && p.period !== null)?.period ?? null
  const prices = fixedPrices(pieces, currency, contextPeriod, warnings)
  const recurring = prices.find((p) => p.billing_period !== 'ONETIME')?.billing_period
  const catalogue = new Catalogue(contextPeriod ?? recurring ?? 'MONTHLY')
  const { groups, allowances } = usageGroups(pieces)
  const volume = /\bvolume\b/i.test(body)
  for (const g of groups) prices.push(catalogue.usagePrice(g, currency, volume))
  catalogue.limits([...allowances, ...pieces.filter((p): p is Extract<Piece, { kind: 'limit' }> => p.kind === 'limit')])
  catalogue.booleanFeatures(pieces)
  const { meters, features, entitlements } = catalogue
  if (!prices.length && !entitlements.length) throw fail(`found no price, allowance or feature in ${quote(text)}`)
  return {
    plan: { name: planName, lookup_key: slug(planName), description: text },
    prices, meters, features, entitlements, warnings,
  }
}

/** The plan's name and the description's pieces; a piece not understood fails. */
function readDescription(description: string): { text: string; planName: string; body: string; pieces: Piece[] } {
  const text = description.trim()
  if (!text) throw fail('description is empty')
  if (text.length > MAX_DESCRIPTION_LENGTH) throw fail(`description is longer than ${MAX_DESCRIPTION_LENGTH} characters`)
  const named = PLAN_NAME.exec(text)
  const planName = named ? named[1].trim() : 'Custom plan'
  const body = named ? text.slice(named[0].length).replace(/^\)\s*/, '') : text

  const pieces: Piece[] = []
  let featureMode = false
  for (const s of splitPieces(body)) {
    const p = readPiece(s, featureMode)
    featureMode = p.kind === 'feature'
    pieces.push(p)
  }
  const unknown = pieces.filter((p): p is Extract<Piece, { kind: 'unknown' }> => p.kind === 'unknown')
  if (unknown.length) {
    const parts = unknown.map((p) => (p.words.length ? `${quote(p.text)} (not understood: ${p.words.join(', ')})` : quote(p.text)))
    throw fail(`could not understand ${parts.join('; ')}`)
  }
  return { text, planName, body, pieces }
}

/** The one currency the pieces name (USD when none does). */
function currencyOf(pieces: Piece[], warnings: string[]): string {
  const currencies = new Set(pieces.flatMap((p) => ('money' in p && p.money.currency ? [p.money.currency] : [])))
  if (currencies.size > 1) throw fail(`one plan has one currency; the description mixes ${[...currencies].sort().join(' and ')}`)
  let currency = [...currencies][0]
  if (!currency) {
    currency = 'USD'
    if (pieces.some((p) => 'money' in p)) warnings.push('no currency was written; USD assumed')
  }
  return currency
}

/** The flat fees, a trial carried by the recurring ones. */
function fixedPrices(pieces: Piece[], currency: string, contextPeriod: BillingPeriod | null, warnings: string[]): ParsedPrice[] {
  const trial = pieces.find((p): p is Extract<Piece, { kind: 'trial' }> => p.kind === 'trial')?.days
  const prices: ParsedPrice[] = []
  for (const p of pieces) {
    if (p.kind !== 'fixed') continue
    const period = p.period ?? contextPeriod
    if (!period) throw fail(`${quote(p.text)}: how often is ${p.money.text} charged? Say per month, per year or one-time`)
    if (p.note) warnings.push(p.note)
    const name = p.unit ? capitalize(p.unit.singular) : period === 'ONETIME' ? 'One-time fee' : `${capitalize(period.toLowerCase().replace('_', '-'))} fee`
    prices.push({
      type: 'FIXED', billing_model: 'FLAT_FEE', currency, amount: p.money.amount.toString(),
      billing_period: period, billing_period_count: 1, invoice_cadence: 'ADVANCE',
      ...(trial !== undefined && period !== 'ONETIME' ? { trial_period_days: trial } : {}),
      display_name: name,
    })
  }
  if (trial !== undefined && !prices.some((p) => p.trial_period_days !== undefined)) warnings.push('a trial was described but there is no recurring fee to carry it')
  return prices
}

/** The meters, features and entitlements of a plan, one per unit and feature. */
class Catalogue {
  readonly meters: ParsedMeter[] = []
  readonly features: ParsedFeature[] = []
  readonly entitlements: ParsedEntitlement[] = []
  private readonly seen: { unit: Unit; entitlement: ParsedEntitlement }[] = []

  /** the period of usage prices and limits that name none */
  constructor(private readonly usagePeriod: BillingPeriod) {}

  /** A tiered, package or flat usage price of a group; its unit becomes metered. */
  usagePrice(g: Group, currency: string, volume: boolean): ParsedPrice {
    const unit = g.unit!
    const period = g.period ?? this.usagePeriod
    const base = {
      type: 'USAGE' as const, currency, billing_period: period, billing_period_count: 1, invoice_cadence: 'ARREAR' as const,
      display_name: capitalize(unit.plural), meter_key: unit.key,
    }
    let price: ParsedPrice
    if (g.tiers.length === 1) {
      const t = g.tiers[0]
      price = t.per && !t.per.eq(1)
        ? { ...base, billing_model: 'PACKAGE', amount: t.money.amount.toString(), transform_quantity: { divide_by: integer(t.per, `the package size in ${quote(t.text)}`), round: 'up' } }
        : { ...base, billing_model: 'FLAT_FEE', amount: t.money.amount.toString() }
    } else {
      const tiers = g.tiers.map((t) => ({ up_to: t.upTo === null ? null : integer(t.upTo, `the tier bound in ${quote(t.text)}`), unit_amount: unitAmount(t) }))
      price = { ...base, billing_model: 'TIERED', tier_mode: volume ? 'VOLUME' : 'SLAB', tiers }
    }
    this.metered(unit, period)
    return price
  }

  /** Allowances and limits: a usage limit on the unit's entitlement. */
  limits(limits: Allowance[]): void {
    for (const l of limits) {
      const e = this.metered(l.unit, l.period)
      e.usage_limit = integer(l.qty, `the limit in ${quote(l.text)}`)
      e.usage_reset_period = l.period ? (RESET[l.period] ?? 'MONTHLY') : 'NEVER'
    }
  }

  booleanFeatures(pieces: Piece[]): void {
    for (const p of pieces) {
      if (p.kind === 'feature') {
        const f = booleanFeatureFor(p.name)
        if (this.features.some((x) => x.key === f.key)) continue
        this.features.push(f)
        this.entitlements.push({ feature_key: f.key, is_enabled: true, usage_limit: null, is_soft_limit: false, usage_reset_period: null })
      }
    }
  }

  /** The entitlement of a unit, its meter and metered feature made on first use. */
  private metered(u: Unit, period: BillingPeriod | null): ParsedEntitlement {
    const hit = this.seen.find((x) => sameUnit(x.unit, u))
    if (hit) return hit.entitlement
    this.meters.push(meterFor(u))
    this.features.push(meteredFeatureFor(u))
    const e: ParsedEntitlement = { feature_key: u.key, is_enabled: true, usage_limit: null, is_soft_limit: false, usage_reset_period: RESET[period ?? this.usagePeriod] ?? 'MONTHLY' }
    this.entitlements.push(e)
    this.seen.push({ unit: u, entitlement: e })
    return e
  }
}

type UsagePiece = Extract<Piece, { kind: 'usage' }>
type TierPiece = Extract<Piece, { kind: 'usage' | 'free' }>

const isOpen = (g: Group) => g.soft || g.tiers[g.tiers.length - 1]?.upTo !== null

/** Usage and free-allowance pieces, in order, into one group of tiers per unit. */
function usageGroups(pieces: Piece[]): { groups: Group[]; allowances: Allowance[] } {
  const groups: Group[] = []
  let current: Group | null = null
  for (const p of pieces) {
    if (p.kind !== 'usage' && p.kind !== 'free') continue
    current = p.kind === 'usage' && !p.tier ? placePrice(groups, current, p) : placeTier(groups, current, p)
  }
  return pricedOrAllowed(groups)
}

/** A usage price without tier words: it prices a pending allowance, continues its unit's group, or opens one. */
function placePrice(groups: Group[], current: Group | null, p: UsagePiece): Group {
  if (!p.unit) throw fail(`${quote(p.text)}: per what?`)
  const pending: Group | null = current && current.unit === null && isOpen(current) ? current : null
  if (pending) {
    // "1000 free, $0.01 per call": the allowance's unit is the price's
    pending.unit = p.unit
    pending.tiers.push({ upTo: null, money: p.money, per: p.per, text: p.text })
    return pending
  }
  const same = groups.find((g) => g.unit && sameUnit(g.unit, p.unit!))
  if (same && isOpen(same) && !same.soft) {
    same.unit = moreSpecific(same.unit!, p.unit)
    same.tiers.push({ upTo: null, money: p.money, per: p.per, text: p.text })
    return same
  }
  if (same) throw fail(`${quote(p.text)}: ${p.unit.plural} already have a price (${quote(same.text)})`)
  const opened: Group = { unit: p.unit, tiers: [{ upTo: null, money: p.money, per: p.per, text: p.text }], soft: true, period: p.period, text: p.text }
  groups.push(opened)
  return opened
}

/** A tier (a usage price with tier words, or an allowance) of its unit's group, or of the open one. */
function placeTier(groups: Group[], current: Group | null, p: TierPiece): Group {
  const mark = p.tier
  const unit = p.unit
  let g: Group | null | undefined = unit ? groups.find((x) => x.unit && sameUnit(x.unit, unit)) : null
  if (!g && current && isOpen(current) && (!unit || current.unit === null)) g = current
  if (!g) {
    g = { unit: null, tiers: [], soft: false, period: null, text: p.text }
    groups.push(g)
  }
  if (unit) g.unit = g.unit ? moreSpecific(g.unit, unit) : unit
  if (p.period && !g.period) g.period = p.period

  const last = g.tiers[g.tiers.length - 1]
  const allowanceFirst = p.kind === 'free' ? (mark?.first ?? p.qty) : undefined
  if (last && last.upTo === null && g.soft && g.tiers.length === 1 && allowanceFirst) {
    // "$0.002 per call, first 1000 calls free": the allowance comes before the price it follows
    g.tiers.unshift({ upTo: allowanceFirst, money: ZERO, per: null, text: p.text })
    g.soft = false
    return g
  }
  if (last && last.upTo === null) {
    const from = mark?.open?.from ?? mark?.first
    if (g.soft && from) {
      last.upTo = from
    } else {
      throw fail(`${quote(p.text)}: comes after the open-ended price ${quote(last.text)}`)
    }
  }
  g.soft = false
  const upTo = tierEnd(p, g.tiers.length ? g.tiers[g.tiers.length - 1].upTo! : D(0))
  g.tiers.push(p.kind === 'free'
    ? { upTo, money: ZERO, per: null, text: p.text }
    : { upTo, money: p.money, per: p.per, text: p.text })
  return g
}

/** Where a tier that starts at `prevEnd` ends (null: open-ended). */
function tierEnd(p: TierPiece, prevEnd: Decimal): Decimal | null {
  const mark = p.tier
  let upTo: Decimal | null
  if (mark?.next) upTo = prevEnd.plus(mark.next)
  else if (mark?.upTo) upTo = mark.upTo
  else if (mark?.first) upTo = mark.first
  else if (p.kind === 'free') upTo = p.qty
  else upTo = null
  if (mark?.open) {
    upTo = null
    const from = mark.open.from
    if (from && !from.eq(prevEnd)) {
      throw fail(prevEnd.isZero()
        ? `${quote(p.text)}: what is charged up to ${from.toString()} is not stated (e.g. "first ${from.toString()} free")`
        : `${quote(p.text)}: starts at ${from.toString()} but the tier before ends at ${prevEnd.toString()}`)
    }
  }
  if (upTo !== null && upTo.lte(prevEnd)) throw fail(`${quote(p.text)}: tier bound ${upTo.toString()} is not above the previous one (${prevEnd.toString()})`)
  return upTo
}

/** Groups with a price, and groups that are only an allowance (a limit). */
function pricedOrAllowed(groups: Group[]): { groups: Group[]; allowances: Allowance[] } {
  const priced: Group[] = []
  const allowances: Allowance[] = []
  for (const g of groups) {
    if (!g.unit) throw fail(`${quote(g.text)}: of what? Name the unit (e.g. "1000 API calls free") or follow it with a per-unit price`)
    const last = g.tiers[g.tiers.length - 1]
    if (g.tiers.length === 1 && last.upTo !== null && last.money === ZERO) {
      // "includes 10,000 API calls" with no price for more: a limit, not a price
      allowances.push({ unit: g.unit, qty: last.upTo, period: g.period, text: g.text })
      continue
    }
    if (last.upTo !== null) throw fail(`what is charged above ${last.upTo.toString()} ${g.unit.plural} is not stated`)
    priced.push(g)
  }
  return { groups: priced, allowances }
}

interface Allowance {
  unit: Unit
  qty: Decimal
  period: BillingPeriod | null
  text: string
}
