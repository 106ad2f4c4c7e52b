// One meter: its definition and its usage over the last 24 hours, all customers, per hour.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { call } from '../api.js'
import { UsageChart } from '../chart.js'
import { useSession } from '../context.js'
import { href } from '../router.js'
import { Status, useLoad } from '../ui.js'
import { usageSeries } from '../usage-series.js'
import { definition } from './meters.js'
import type { Meter, UsageAnswer } from './usage-panel.js'

export function MeterPage({ id }: { id: string }): VNode {
  const { client } = useSession()
  const meter = useLoad(() => call<Meter>(client.GET('/v1/meters/{id}', { params: { path: { id } } })), [id])
  const usage = useLoad(async () => {
    const end = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000)
    const start = new Date(end.getTime() - 24 * 3_600_000)
    const answer = await call<UsageAnswer>(client.POST('/v1/meters/{id}/usage', {
      params: { path: { id } }, body: { start_time: start.toISOString(), end_time: end.toISOString(), window_size: 'HOUR' },
    }))
    return { answer, range: [start.getTime(), end.getTime()] as [number, number] }
  }, [id])
  if (!meter.data) return html`<h1>Meter</h1><${Status} loaded=${meter} />`
  const m = meter.data
  return html`<h1 data-testid="meter-title">${m.name}</h1>
    <dl class="fields">
      <dt>Event name</dt><dd><code>${m.event_name}</code></dd><dt>Id</dt><dd>${m.id}</dd>
      <dt>Definition</dt><dd>${definition(m)}</dd><dt>Resets</dt><dd>${m.reset_usage ?? '—'}</dd>
    </dl>
    <h2>Last 24 hours, all customers, per hour</h2>
    <${Status} loaded=${usage} />
    ${usage.data ? html`<p>Total: <strong data-testid="meter-total">${usage.data.answer.value}</strong> from ${usage.data.answer.event_count} events.</p>
      <${UsageChart} data=${usageSeries(usage.data.answer.items)} window="HOUR" range=${usage.data.range} />` : null}
    <p><a href=${href('/events', { event_name: m.event_name })}>Latest ${m.event_name} events →</a></p>`
}
