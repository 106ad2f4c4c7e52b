// The words of a pricing description as typed items: money (amount and, when written, its
// currency), quantities ("10k", "1,000", "2 million") and plain words. Pure.
import type { Decimal } from 'decimal.js'
import { D } from '../pricing/index.js'

export type Item =
  | { kind: 'money'; amount: Decimal; currency: string | null; text: string }
  | { kind: 'qty'; value: Decimal; text: string }
  | { kind: 'word'; w: string }

const SYMBOLS: Record<string, string> = { $: 'USD', '€': 'EUR', '£': 'GBP', '¥': 'JPY', '₹': 'INR' }
const CURRENCY_CODES = new Set([
  'usd', 'eur', 'gbp', 'jpy', 'inr', 'cad', 'aud', 'nzd', 'chf', 'sek', 'nok', 'dkk', 'pln', 'czk', 'sgd', 'hkd',
  'brl', 'mxn', 'cny', 'krw', 'zar', 'aed', 'kwd', 'bhd', 'ils', 'try',
])
const CURRENCY_WORDS: Record<string, string> = { dollar: 'USD', dollars: 'USD', euro: 'EUR', euros: 'EUR', pound: 'GBP', pounds: 'GBP' }
const CENTS = new Set(['cent', 'cents', '¢'])
const MULTIPLIERS: Record<string, string> = {
  k: '1000', thousand: '1000', m: '1000000', mm: '1000000', million: '1000000', mil: '1000000', b: '1000000000', bn: '1000000000', billion: '1000000000',
}

const NUMBER = /^(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(k|m|mm|bn|b)?(¢)?$/

function number(text: string): { value: Decimal; cents: boolean } | null {
  const m = NUMBER.exec(text)
  if (!m) return null
  let value = D(m[1].replace(/,/g, '') + (m[2] ?? ''))
  if (m[3]) value = value.times(MULTIPLIERS[m[3]])
  return { value, cents: m[4] !== undefined }
}

/** Lower-cased words, with "/", ":", "(", ")", "@", "+" and number ranges ("1k-10k") split off. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[–—]/g, '-')
    .replace(/([/:()@=])/g, ' $1 ')
    .replace(/(\d[km]?)\s*-\s*(?=\d)/g, '$1 - ')
    .replace(/(\d)-(?=[a-z])/g, '$1 ')
    .replace(/(\d[km]?)\+/g, '$1 +')
    .replace(/([$€£¥₹])\s+(?=\d)/g, '$1')
    .split(/\s+/)
    .filter((w) => w !== '')
}

/** Items of one piece of text; a number next to a currency sign, code or word is money. */
export function items(text: string): Item[] {
  const ws = words(text)
  const out: Item[] = []
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]
    const symbol = SYMBOLS[w[0]]
    if (symbol && w.length > 1) {
      const n = number(w.slice(1))
      if (n) {
        out.push({ kind: 'money', amount: n.value, currency: symbol, text: w })
        continue
      }
    }
    if (CURRENCY_CODES.has(w) && i + 1 < ws.length && number(ws[i + 1])) {
      const n = number(ws[i + 1])!
      out.push({ kind: 'money', amount: n.value, currency: w.toUpperCase(), text: `${w} ${ws[i + 1]}` })
      i++
      continue
    }
    const n = number(w)
    if (n) {
      let value = n.value
      let j = i + 1
      if (MULTIPLIERS[ws[j]] && ws[j].length > 2) value = value.times(MULTIPLIERS[ws[j++]])
      const next = ws[j]
      if (n.cents || CENTS.has(next)) {
        out.push({ kind: 'money', amount: value.div(100), currency: null, text: w })
        if (!n.cents) j++
      } else if (next && (CURRENCY_CODES.has(next) || CURRENCY_WORDS[next])) {
        out.push({ kind: 'money', amount: value, currency: CURRENCY_WORDS[next] ?? next.toUpperCase(), text: `${w} ${next}` })
        j++
      } else {
        out.push({ kind: 'qty', value, text: w })
      }
      i = j - 1
      continue
    }
    out.push({ kind: 'word', w })
  }
  return out
}

export const isWord = (it: Item | undefined, ...ws: string[]): boolean => it?.kind === 'word' && ws.includes(it.w)
