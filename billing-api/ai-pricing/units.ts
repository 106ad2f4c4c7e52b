// Names of what is counted ("API calls", "tokens", "GB"): singular/plural forms, the key that
// ties a price to its meter and feature, and how a meter aggregates it. Pure.
import type { ParsedFeature, ParsedMeter } from './parsed-pricing.js'

const ACRONYMS = new Set(['api', 'gb', 'mb', 'tb', 'kb', 'pb', 'sms', 'mms', 'cpu', 'gpu', 'vcpu', 'llm', 'ai', 'sso', 'url', 'sla', 'ip', 'pdf', 'mau', 'dau', 'saml', 'http', 'ocr'])
/** counted per event; anything else is a quantity carried by the event and summed */
const SUMMED = new Set(['token', 'character', 'word', 'byte', 'kb', 'mb', 'gb', 'tb', 'pb', 'minute', 'hour', 'second', 'millisecond', 'ms', 'credit', 'gb-hour', 'gb-month', 'unit'])
/** priced per unit per period, as a licence rather than as usage */
export const LICENSE_UNITS = new Set(['seat', 'user', 'license', 'licence', 'member', 'editor', 'agent', 'admin', 'workspace', 'location', 'host', 'node', 'instance', 'server'])

const INVARIANT = new Set([...ACRONYMS, 'gb-hour', 'gb-month', 'ms', 'data', 'storage', 'bandwidth', 'compute'])

export function singular(w: string): string {
  if (INVARIANT.has(w) || w.length <= 3) return w
  if (w.endsWith('ies')) return w.slice(0, -3) + 'y'
  if (/(ches|shes|xes|sses)$/.test(w)) return w.slice(0, -2)
  if (w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1)
  return w
}

export function plural(w: string): string {
  if (INVARIANT.has(w)) return w
  if (/[^aeiou]y$/.test(w)) return w.slice(0, -1) + 'ies'
  if (/(ch|sh|x|s)$/.test(w)) return w + 'es'
  return w + 's'
}

/** A counted thing, from the words that name it ("api", "calls"). */
export interface Unit {
  /** snake_case, singular: "api_call" */
  key: string
  singular: string
  plural: string
}

const display = (ws: string[]) => ws.map((w) => (ACRONYMS.has(w) ? w.toUpperCase() : w)).join(' ')
const snake = (ws: string[]) => ws.join('_').replace(/[^a-z0-9_]/g, '_').replace(/_+/g, '_').replace(/^_|_$/g, '')

export function unitOf(ws: string[]): Unit {
  const sing = [...ws.slice(0, -1), singular(ws[ws.length - 1])]
  const plur = [...ws.slice(0, -1), plural(sing[sing.length - 1])]
  return { key: snake(sing), singular: display(sing), plural: display(plur) }
}

/** "call" and "api_call" name the same thing */
export function sameUnit(a: Unit, b: Unit): boolean {
  return a.key === b.key || a.key.endsWith(`_${b.key}`) || b.key.endsWith(`_${a.key}`)
}

/** of two names of the same thing, the more specific */
export function moreSpecific(a: Unit, b: Unit): Unit {
  return b.key.length > a.key.length ? b : a
}

export function isLicense(u: Unit): boolean {
  return LICENSE_UNITS.has(u.key.split('_').pop()!)
}

const capitalize = (s: string) => s.charAt(0).toUpperCase() + s.slice(1)

export function meterFor(u: Unit): ParsedMeter {
  // "gb_of_storage" is measured in GB
  const last = u.key.split('_of_')[0].split('_').pop()!
  const field = snake(u.plural.toLowerCase().split(' '))
  return {
    key: u.key,
    name: capitalize(u.plural),
    event_name: u.key,
    aggregation: SUMMED.has(last) ? { type: 'SUM', field } : { type: 'COUNT' },
  }
}

export function meteredFeatureFor(u: Unit): ParsedFeature {
  return {
    key: u.key,
    name: capitalize(u.plural),
    lookup_key: snake(u.plural.toLowerCase().split(' ')),
    type: 'metered',
    meter_key: u.key,
    unit_singular: u.singular,
    unit_plural: u.plural,
  }
}

export function booleanFeatureFor(name: string): ParsedFeature {
  const key = snake(name.toLowerCase().split(/\s+/))
  return { key, name: capitalize(display(name.toLowerCase().split(/\s+/))), lookup_key: key, type: 'boolean' }
}

export function slug(text: string): string {
  return snake(text.toLowerCase().split(/\s+/)) || 'plan'
}
