// Platform health from /platform/metrics (every process's /metrics in one text): ingestion rate
// (two readings apart), aggregator lag and usage freshness, spool size; and the platform's
// processes (/platform/processes: one per role in the processes topology). Both are open like
// /health and platform-wide: they carry no tenant's data, only process figures.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'
import { healthFigures, parseMetrics, type HealthFigures } from '../metrics-text.js'
import { messageOf } from '../ui.js'

const EVERY_MS = 5000

interface PlatformProcess { name: string; pid: number | null; port: number; state: string; restarts: number; healthy: boolean; started_at: string | null; last_exit: string | null }
interface Reading { at: number; f: HealthFigures; processes: PlatformProcess[] }

async function read(): Promise<Reading> {
  const [metrics, processes] = await Promise.all([fetch('/platform/metrics', { cache: 'no-store' }), fetch('/platform/processes', { cache: 'no-store' })])
  if (!metrics.ok) throw new Error(`/platform/metrics answered ${metrics.status}`)
  if (!processes.ok) throw new Error(`/platform/processes answered ${processes.status}`)
  return { at: Date.now(), f: healthFigures(parseMetrics(await metrics.text())), processes: ((await processes.json()) as { items: PlatformProcess[] }).items }
}

function Processes({ items }: { items: PlatformProcess[] }): VNode {
  return html`<h2>Processes</h2>
    <table data-testid="processes"><thead><tr><th>Process</th><th>pid</th><th>port</th><th>State</th><th>Restarts</th><th>Last exit</th></tr></thead>
    <tbody>${items.map((p) => html`<tr data-testid=${`process-${p.name}`}>
      <td>${p.name}</td><td>${p.pid ?? '—'}</td><td>${p.port}</td>
      <td>${p.healthy ? p.state : `${p.state} (not answering)`}</td><td>${p.restarts}</td><td>${p.last_exit ?? '—'}</td>
    </tr>`)}</tbody></table>`
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
    <p class="muted">The platform's figures from every process's /metrics (all tenants), read every ${EVERY_MS / 1000} s.</p>
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
    </div>` : error ? null : html`<p class="muted">Reading…</p>`}
    ${now ? html`<${Processes} items=${now.processes} />` : null}`
}
