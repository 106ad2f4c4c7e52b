// Plain-text output of the CLI (pure: tested in format.test.ts).
import type { AggregatorView, BillingRunView, JobView, QueueStatus, ScheduledJob } from './client.js'

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()
  return [line(header), ...rows.map(line)].join('\n')
}

export function every(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`
  if (ms % 60_000 === 0) return `${ms / 60_000} min`
  if (ms % 1000 === 0) return `${ms / 1000} s`
  return `${ms} ms`
}

export function formatJobs(jobs: ScheduledJob[]): string {
  return table(['JOB', 'EVERY', 'NEXT RUN'], jobs.map((j) => [j.name, every(j.every_ms), j.next_run_at ?? '-']))
}

const SHOWN_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const

export function formatStatus(queues: QueueStatus[]): string {
  const counts = table(
    ['QUEUE', ...SHOWN_STATES.map((s) => s.toUpperCase())],
    queues.map((q) => [q.queue, ...SHOWN_STATES.map((s) => String(s === 'waiting' ? q.counts.waiting + q.counts.prioritized + q.counts['waiting-children'] : q.counts[s]))]),
  )
  const failures = queues.flatMap((q) => q.recent_failures.map((f) => [q.queue, f.id, f.name, f.failed_at ?? '-', String(f.attempts_made), f.failed_reason.split('\n')[0]]))
  if (failures.length === 0) return `${counts}\n\nno failed jobs`
  return `${counts}\n\nrecent failures (retry: npm run admin -- jobs retry <id> --queue <queue>)\n${table(['QUEUE', 'ID', 'JOB', 'FAILED AT', 'ATTEMPTS', 'REASON'], failures)}`
}

export function describeJob(j: JobView): string {
  const head = `${j.queue} job ${j.id} (${j.name}): ${j.state}, ${j.attempts_made} attempt(s)`
  if (j.state === 'completed') return `${head}, returned ${JSON.stringify(j.return_value)}`
  if (j.failed_reason) return `${head}, last failure: ${j.failed_reason}`
  return head
}

/** One progress line while a job runs: elapsed time, state, attempts. */
export function progressLine(j: JobView, elapsedMs: number): string {
  const t = `${(elapsedMs / 1000).toFixed(1)}s`.padStart(7)
  const extra = j.state === 'completed'
    ? `: ${JSON.stringify(j.return_value)} item(s)`
    : j.state === 'failed' ? `: ${j.failed_reason ?? 'unknown reason'}` : j.attempts_made > 0 ? ` (attempt ${j.attempts_made + 1})` : ''
  return `[${t}] ${j.name} #${j.id} ${j.state}${extra}`
}

/** One line of a billing run's progress record (billing/billing-runs.ts). */
export function billingRunLine(r: Pick<BillingRunView, 'id' | 'state' | 'subscriptions' | 'total' | 'invoices' | 'failures' | 'rate' | 'eta_seconds'>): string {
  const n = (x: number) => x.toLocaleString('en-US')
  const eta = r.state === 'running' ? (r.eta_seconds === null ? ', ETA unknown' : `, ETA ${r.eta_seconds} s`) : ''
  return `  billing run ${r.id} ${r.state}: ${n(r.subscriptions)} / ${n(r.total)} subscriptions, ${n(r.invoices)} invoices, ${n(r.failures)} failed, ${r.rate}/s${eta}`
}

export function formatAggregators(consumers: AggregatorView[]): string {
  return table(['CONSUMER', 'PARTITIONS', 'SHARDS', 'EVENTS', 'WRITES'], consumers.map((c) => [c.name, c.partitions.join(',') || '-', String(c.shards), String(c.events), String(c.writes)]))
}
