// The metric names a PromQL expression reads, and whether a scrape declares them.

const NAME = /\b((?:meterline|process|nodejs)_[a-zA-Z0-9_]+)\b|\b(up)\s*\{/g
const HISTOGRAM_SERIES = /_(bucket|sum|count)$/

export function metricNames(expr: string): string[] {
  const out = new Set<string>()
  for (const m of expr.matchAll(NAME)) out.add(m[1] ?? m[2])
  return [...out]
}

/** Prometheus' own series (not in any /metrics of ours). */
const SYNTHETIC = new Set(['up'])

export function isDeclared(name: string, declared: Map<string, string>): boolean {
  if (SYNTHETIC.has(name) || declared.has(name)) return true
  const base = name.replace(HISTOGRAM_SERIES, '')
  return base !== name && (declared.get(base) === 'histogram' || declared.get(base) === 'summary')
}
