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
  /** mean time from ingest's 202 to the aggregator's commit, over the process's life */
  freshnessMeanSeconds: number | null
  spoolBytes: number
  spoolOldestUnforwardedSeconds: number
}

export function healthFigures(samples: Sample[]): HealthFigures {
  const count = sumOf(samples, 'meterline_usage_freshness_seconds_count')
  return {
    eventsAccepted: sumOf(samples, 'meterline_ingest_events_accepted_total'),
    eventsConsumed: sumOf(samples, 'meterline_aggregator_events_consumed_total'),
    lagEvents: sumOf(samples, 'meterline_aggregator_lag_events'),
    lagSeconds: maxOf(samples, 'meterline_aggregator_lag_seconds'),
    freshnessMeanSeconds: count > 0 ? sumOf(samples, 'meterline_usage_freshness_seconds_sum') / count : null,
    spoolBytes: sumOf(samples, 'meterline_spool_bytes'),
    spoolOldestUnforwardedSeconds: maxOf(samples, 'meterline_spool_oldest_unforwarded_age_seconds'),
  }
}
