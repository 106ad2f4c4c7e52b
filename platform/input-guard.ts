// Text every store can keep as it was sent: Postgres `text` rejects U+0000 (a 500 before this
// guard) and a lone UTF-16 surrogate has no UTF-8 form (the driver would silently turn it into
// U+FFFD). One check for every string of a request's body, query and path parameters, object
// keys included, so no route can forget it.
import { ValidationError } from './errors.js'

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why `s` cannot be stored as sent, or undefined when it can. */
export function badText(s: string): string | undefined {
  if (s.includes('\u0000')) return 'must not contain the NUL character (U+0000)'
  if (LONE_SURROGATE.test(s)) return 'must not contain a lone UTF-16 surrogate'
  return undefined
}

function join(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`
  return path ? `${path}.${key}` : key
}

/** The path and reason of the first unstorable string in `value` (depth-first), if any. */
export function findBadText(value: unknown, path = ''): { path: string; reason: string } | undefined {
  if (typeof value === 'string') {
    const reason = badText(value)
    return reason ? { path, reason } : undefined
  }
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value)) return undefined
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findBadText(value[i], join(path, i))
      if (bad) return bad
    }
    return undefined
  }
  for (const [key, v] of Object.entries(value)) {
    const keyReason = badText(key)
    if (keyReason) return { path: join(path, JSON.stringify(key).slice(1, -1)), reason: `key ${keyReason}` }
    const bad = findBadText(v, join(path, key))
    if (bad) return bad
  }
  return undefined
}

/** Throws a 400 naming the field: `body.events[0].source must not contain ...`. */
export function assertStorableText(parts: { name: string; value: unknown }[]): void {
  for (const { name, value } of parts) {
    const bad = findBadText(value)
    if (bad) {
      const field = name === 'body' ? bad.path || 'body' : bad.path ? `${name}.${bad.path}` : name
      throw new ValidationError(`${field} ${bad.reason}`, field)
    }
  }
}
