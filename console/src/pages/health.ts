// Platform health from /metrics: ingestion rate (two readings apart), aggregator lag and usage
// freshness, spool size. /metrics is the platform's Prometheus endpoint, open like /health and
// platform-wide: it carries no tenant's data, only these process figures.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { healthFigures, parseMetrics, type HealthFigures } from '../metrics-text.js'
import { messageOf } from '../ui.js'

const EVERY_MS = 5000

interface Reading { at: number; f: HealthFigures }

async function read(): Promise<Reading> {
  const res = await fetch('/metrics', { cache: 'no-store' })
  if (!res.ok) throw new Error(`/metrics answered ${res.status}`)
  return { at: Date.now(), f: healthFigures(parseMetrics(await res.text())) }
}

const bytes = (n: number) => (n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} B`)

const bound = (s: number | null) => (s === null ? '—' : s === Infinity ? '> 1 h' : `≤ ${s} s`)

function Card({ label, value, id }: { label: string; value: string; id: string }): VNode {
  return html`<div class="card"><div class="label">${label}</div><div class="value" data-testid=${id}>${value}</div></div>`
}

export function HealthPage(): VNode {
  const [now, setNow] = useState<Reading>()
  const [rate, setRate] = useState<{ accepted: number; consumed: number } | null>(null)
  const [error, setError] = useState<string>()
  const prev = useRef<Reading>()
  useEffect(() => {
    let live = true
    const tick = () => void read().then((r) => {
      if (!live) return
      const p = prev.current
      if (p) {
        const s = (r.at - p.at) / 1000
        setRate({ accepted: (r.f.eventsAccepted - p.f.eventsAccepted) / s, consumed: (r.f.eventsConsumed - p.f.eventsConsumed) / s })
      }
      prev.current = r
      setNow(r)
      setError(undefined)
    }, (err: unknown) => live && setError(messageOf(err)))
    tick()
    const timer = setInterval(tick, EVERY_MS)
    return () => {
      live = false
      clearInterval(timer)
    }
  }, [])
  const f = now?.f
  return html`<h1>Health</h1>
    <p class="muted">The platform process's figures from /metrics (all tenants), read every ${EVERY_MS / 1000} s.</p>
    ${error ? html`<div class="error" role="alert">${error}</div>` : null}
    ${f ? html`<div class="cards" data-testid="health">
      <${Card} id="ingest-rate" label="Ingestion rate (events/s accepted)" value=${rate ? rate.accepted.toFixed(1) : 'measuring…'} />
      <${Card} id="consume-rate" label="Aggregator rate (events/s)" value=${rate ? rate.consumed.toFixed(1) : 'measuring…'} />
      <${Card} id="lag-events" label="Aggregator lag (events)" value=${String(Math.round(f.lagEvents))} />
      <${Card} id="lag-seconds" label="Aggregator lag (s, worst partition)" value=${f.lagSeconds.toFixed(1)} />
      <${Card} id="freshness" label="Usage freshness, 202 to counted (p50 / p99)" value=${`${bound(f.freshnessP50Seconds)} / ${bound(f.freshnessP99Seconds)}`} />
      <${Card} id="spool-bytes" label="Ingest spool" value=${bytes(f.spoolBytes)} />
      <${Card} id="spool-age" label="Oldest unforwarded (s)" value=${f.spoolOldestUnforwardedSeconds.toFixed(1)} />
      <${Card} id="events-accepted" label="Events accepted since start" value=${String(f.eventsAccepted)} />
    </div>` : error ? null : html`<p class="muted">Reading…</p>`}`
}
