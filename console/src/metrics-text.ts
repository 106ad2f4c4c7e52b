// Reads the few platform figures the Health page shows from the Prometheus text of /metrics.
export interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = []
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line)
    if (!m) continue
    const labels: Record<string, string> = {}
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2].replace(/\\(.)/g, '$1')
    out.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return out
}

const sumOf = (s: Sample[], name: string) => s.filter((x) => x.name === name).reduce((a, x) => a + x.value, 0)
const maxOf = (s: Sample[], name: string) => s.filter((x) => x.name === name).reduce((a, x) => Math.max(a, x.value), 0)

export interface HealthFigures {
  /** counters: the page turns two readings into a rate */
  eventsAccepted: number
  eventsConsumed: number
  /** events not yet processed, summed over partitions */
  lagEvents: number
  /** the worst partition's lag in seconds (0 when caught up) */
  lagSeconds: number
  /** time from ingest's 202 to the aggregator's commit, over the process's life: the histogram
   * bucket bounds under which half and 99 % of batches fell (Infinity: beyond the last bucket) */
  freshnessP50Seconds: number | null
  freshnessP99Seconds: number | null
  spoolBytes: number
  spoolOldestUnforwardedSeconds: number
}

/** The smallest bucket bound `le` under which a share q of a histogram's observations fell. */
export function quantileBound(samples: Sample[], histogram: string, q: number): number | null {
  const buckets = new Map<number, number>()
  for (const s of samples) {
    if (s.name !== `${histogram}_bucket` || s.labels.le === undefined) continue
    const le = s.labels.le === '+Inf' ? Infinity : Number(s.labels.le)
    buckets.set(le, (buckets.get(le) ?? 0) + s.value)
  }
  const total = buckets.get(Infinity) ?? 0
  if (total === 0) return null
  for (const [le, cumulative] of [...buckets].sort(([a], [b]) => a - b)) if (cumulative >= q * total) return le
  return Infinity
}

export function healthFigures(samples: Sample[]): HealthFigures {
  return {
    eventsAccepted: sumOf(samples, 'meterline_ingest_events_accepted_total'),
    eventsConsumed: sumOf(samples, 'meterline_aggregator_events_consumed_total'),
    lagEvents: sumOf(samples, 'meterline_aggregator_lag_events'),
    lagSeconds: maxOf(samples, 'meterline_aggregator_lag_seconds'),
    freshnessP50Seconds: quantileBound(samples, 'meterline_usage_freshness_seconds', 0.5),
    freshnessP99Seconds: quantileBound(samples, 'meterline_usage_freshness_seconds', 0.99),
    spoolBytes: sumOf(samples, 'meterline_spool_bytes'),
    spoolOldestUnforwardedSeconds: maxOf(samples, 'meterline_spool_oldest_unforwarded_age_seconds'),
  }
}
