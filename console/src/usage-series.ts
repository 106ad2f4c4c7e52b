// The usage API's windows as chart series: one x axis (window starts, epoch seconds) and one
// series per group value. Sums are exact (decimal.js); the chart draws numbers, the page shows
// the exact sum beside it.
import { Decimal } from 'decimal.js'

// Meter values have up to 26 integer and 12 decimal digits: sums need more than the default 20.
const Exact = Decimal.clone({ precision: 60 })

export interface UsageItem {
  window_start: string | null
  value: string
  event_count: number
  group_by?: Record<string, string> | null
}

export interface UsageSeries {
  xs: number[]
  series: { label: string; values: (number | null)[]; sum: string }[]
  /** exact sum of every plotted window value */
  sum: string
}

export function groupLabel(groups: Record<string, string> | null | undefined): string {
  const entries = Object.entries(groups ?? {})
  return entries.length === 0 ? 'usage' : entries.map(([k, v]) => `${k}=${v}`).join(', ')
}

export function usageSeries(items: UsageItem[]): UsageSeries {
  const windowed = items.filter((i) => i.window_start !== null)
  const xs = [...new Set(windowed.map((i) => Date.parse(i.window_start!) / 1000))].sort((a, b) => a - b)
  const at = new Map(xs.map((x, i) => [x, i]))
  const byLabel = new Map<string, { values: (number | null)[]; sum: Decimal }>()
  let total = new Exact(0)
  for (const item of windowed) {
    const label = groupLabel(item.group_by)
    let s = byLabel.get(label)
    if (!s) byLabel.set(label, (s = { values: xs.map(() => null), sum: new Exact(0) }))
    s.values[at.get(Date.parse(item.window_start!) / 1000)!] = Number(item.value)
    s.sum = s.sum.plus(item.value)
    total = total.plus(item.value)
  }
  const series = [...byLabel].sort(([a], [b]) => a.localeCompare(b)).map(([label, s]) => ({ label, values: s.values, sum: s.sum.toFixed() }))
  return { xs, series, sum: total.toFixed() }
}
