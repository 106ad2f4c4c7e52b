// `npm run dashboards:snapshot`: every dashboard panel evaluated on real data, without Grafana.
// Starts the platform (as the tests do) and a local Prometheus (Debian package `prometheus`,
// started by scripts/prometheus.sh like `npm run up` does) that scrapes it every second with the alert rules loaded, runs the demo workload, then asks
// Prometheus for each panel's queries ($__rate_interval = 1m) and writes the answers, and the
// alert states, to docs/dashboards-snapshot.md. Panels stay unrendered as pictures.
import { writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startTestPlatform } from '../support/platform.js'
import { expressions } from '../../scripts/grafana/panels.js'
import { dashboardFiles } from './dashboard-files.js'
import { startLocalPrometheus, type LocalPrometheus } from './local-prometheus.js'
import { runDemoWorkload } from './demo-workload.js'

const PROM_PORT = Number(process.env.SNAPSHOT_PROMETHEUS_PORT ?? 19494)
const OUT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'dashboards-snapshot.md')
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

interface PromSeries {
  metric: Record<string, string>
  value: [number, string]
}

async function query(expr: string): Promise<PromSeries[] | string> {
  const res = await fetch(`http://127.0.0.1:${PROM_PORT}/api/v1/query?query=${encodeURIComponent(expr)}`)
  const body = (await res.json()) as { status: string; error?: string; data?: { resultType: string; result: PromSeries[] } }
  if (body.status !== 'success') return `error: ${body.error ?? res.status}`
  return body.data?.result ?? []
}

function legend(format: string, metric: Record<string, string>): string {
  if (!format || format === '__auto') return Object.entries(metric).map(([k, v]) => `${k}=${v}`).join(',') || 'value'
  return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, k: string) => metric[k] ?? '')
}

function fmt(v: string): string {
  const n = Number(v)
  if (!Number.isFinite(n)) return v
  return Math.abs(n) >= 100 || Number.isInteger(n) ? String(Math.round(n * 100) / 100) : n.toPrecision(3)
}

async function main(): Promise<void> {
  const p = await startTestPlatform()
  let prom: LocalPrometheus | undefined
  try {
    prom = await startLocalPrometheus({ port: PROM_PORT, target: new URL(p.url).host, interval: '1s' })
    // Twice: Prometheus sees a labelled series from its first sample on, so the first run creates
    // the series (tenant, currency...) and increase() and rate() measure the second.
    await runDemoWorkload(p)
    await sleep(5000)
    const started = Date.now()
    await runDemoWorkload(p)
    const workloadMs = Date.now() - started
    await sleep(5000)

    const lines: string[] = [
      '# Dashboards on real data (snapshot)',
      '',
      'Written by `npm run dashboards:snapshot`: the platform as the tests start it, scraped every second by a',
      'local Prometheus with `deploy/prometheus/alerts.yml` loaded, after the demo workload of',
      '`test/observability/demo-workload.ts`, run twice 5 s apart (each: 250 events, one refused request, a',
      '12.75 USD invoice finalized and paid, a skipped invoice, a 5.00 invoice finalized and voided; the',
      'first run creates the labelled series, so the increases below are mostly those of the second).',
      'Every panel query was sent to',
      'Prometheus as is, with `$__rate_interval` = `1m`; the values are those at the end of the run, so',
      '`rate()`s are averages over the last minute. This is a table of numbers, not Grafana\'s pictures:',
      'Grafana was not run here.',
      '',
      `Generated ${new Date().toISOString()}; second workload ${(workloadMs / 1000).toFixed(1)} s. "no data": the query`,
      'returned no series: nothing happened that it counts (no failure, no 503; the workload subscribes no',
      'webhook endpoint, so the webhook panels stay empty; NaN: a quantile of no observations). Two things to read the numbers right: `increase()` extrapolates to the window\'s',
      'edges, so 2 invoices read 2.21 over a window longer than the data; and each run creates its own',
      'tenant, so the per-tenant series of the second run are new (their first sample has nothing before it:',
      'rate 0), while the totals carry on.',
      '',
    ]
    for (const [file, dash] of Object.entries(dashboardFiles())) {
      lines.push(`## ${String(dash.title)} (\`grafana/dashboards/${file}\`)`, '', '| Panel | Series | Value |', '|---|---|---|')
      const targets = (dash.panels as { title?: string; targets?: { expr?: string; legendFormat?: string }[] }[]).flatMap((panel) =>
        (panel.targets ?? []).map((t) => ({ panel: panel.title ?? '', expr: t.expr ?? '', legend: t.legendFormat ?? '' })),
      )
      if (targets.length !== expressions(dash).length) throw new Error('targets and expressions disagree')
      for (const t of targets) {
        const result = await query(t.expr.replaceAll('$__rate_interval', '1m'))
        if (typeof result === 'string') {
          lines.push(`| ${t.panel} | ${result.replaceAll('|', '\\|')} | |`)
        } else if (result.length === 0) {
          lines.push(`| ${t.panel} | no data | |`)
        } else {
          for (const s of result.slice(0, 8)) lines.push(`| ${t.panel} | ${legend(t.legend, s.metric).replaceAll('|', '\\|')} | ${fmt(s.value[1])} |`)
          if (result.length > 8) lines.push(`| ${t.panel} | ... ${result.length - 8} more series | |`)
        }
      }
      lines.push('')
    }
    const rules = (await (await fetch(`http://127.0.0.1:${PROM_PORT}/api/v1/rules`)).json()) as {
      data: { groups: { name: string; rules: { name: string; state: string; health: string; lastError?: string }[] }[] }
    }
    lines.push('## Alert rules', '', '| Group | Alert | State | Health |', '|---|---|---|---|')
    for (const g of rules.data.groups) for (const r of g.rules) lines.push(`| ${g.name} | ${r.name} | ${r.state} | ${r.health}${r.lastError ? `: ${r.lastError}` : ''} |`)
    lines.push('')
    writeFileSync(OUT, lines.join('\n'))
    console.log(`wrote ${OUT}`)
  } finally {
    await prom?.stop()
    await p.stop()
  }
}

await main()
