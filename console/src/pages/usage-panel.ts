// A customer's usage of one meter over a range, DAY or HOUR windows, optionally grouped by a
// property: the usage API's windows drawn, its total shown beside the sum of what is drawn.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { call, type Page } from '../api.js'
import { UsageChart } from '../chart.js'
import { useSession } from '../context.js'
import { usageSeries, type UsageItem } from '../usage-series.js'
import { Status, useLoad } from '../ui.js'

export interface Meter {
  id: string
  name: string
  event_name: string
  aggregation: { type: string; field?: string; expression?: string; group_by?: string; multiplier?: string }
  filters?: { key: string; values: string[] }[] | null
  reset_usage?: string
  created_at: string
}

export interface UsageAnswer {
  value: string
  event_count: number
  items: UsageItem[]
}

export interface UsageRange {
  meterId: string
  from: string
  to: string
  window: 'DAY' | 'HOUR'
  groupBy: string
}

const day = (d: Date) => d.toISOString().slice(0, 10)

export function defaultRange(query: URLSearchParams, meters: Meter[]): UsageRange {
  const today = new Date()
  return {
    meterId: query.get('meter') ?? meters[0]?.id ?? '',
    from: query.get('from') ?? day(new Date(today.getTime() - 29 * 86_400_000)),
    to: query.get('to') ?? day(new Date(today.getTime() + 86_400_000)),
    window: query.get('window') === 'HOUR' ? 'HOUR' : 'DAY',
    groupBy: query.get('group_by') ?? '',
  }
}

export function useMeters() {
  const { client } = useSession()
  return useLoad(() => call<Page<Meter>>(client.GET('/v1/meters', { params: { query: { limit: 1000, offset: 0 } } })), [])
}

export function UsagePanel({ externalCustomerId, range, meters, onChange }: {
  externalCustomerId?: string
  range: UsageRange
  meters: Meter[]
  onChange: (r: UsageRange) => void
}): VNode {
  const { client } = useSession()
  const usage = useLoad(async () => {
    if (!range.meterId) return undefined
    return call<UsageAnswer>(client.POST('/v1/meters/{id}/usage', {
      params: { path: { id: range.meterId } },
      body: {
        ...(externalCustomerId ? { external_customer_id: externalCustomerId } : {}),
        start_time: `${range.from}T00:00:00Z`, end_time: `${range.to}T00:00:00Z`, window_size: range.window,
        ...(range.groupBy ? { group_by: [range.groupBy] } : {}),
      },
    }))
  }, [externalCustomerId, range.meterId, range.from, range.to, range.window, range.groupBy])
  const meter = meters.find((m) => m.id === range.meterId)
  const submit = (e: Event) => {
    e.preventDefault()
    const f = new FormData(e.target as HTMLFormElement)
    onChange({
      meterId: f.get('meter') as string, from: f.get('from') as string, to: f.get('to') as string,
      window: f.get('window') === 'HOUR' ? 'HOUR' : 'DAY', groupBy: (f.get('group_by') as string).trim(),
    })
  }
  if (meters.length === 0) return html`<p class="muted">No meters in this environment.</p>`
  return html`<form class="filters" onSubmit=${submit} data-testid="usage-form">
      <label>Meter <select name="meter" value=${range.meterId}>${meters.map((m) => html`<option value=${m.id}>${m.name} (${m.event_name})</option>`)}</select></label>
      <label>From (UTC) <input type="date" name="from" value=${range.from} /></label>
      <label>To (UTC, exclusive) <input type="date" name="to" value=${range.to} /></label>
      <label>Window <select name="window" value=${range.window}><option>DAY</option><option>HOUR</option></select></label>
      <label>Group by <input name="group_by" value=${range.groupBy} placeholder=${meter?.aggregation.group_by ?? 'property'} /></label>
      <button type="submit">Show</button>
    </form>
    <${Status} loaded=${usage} />
    ${usage.data ? html`<div class="cards">
        <div class="card"><div class="label">Total (${meter?.aggregation.type ?? ''}, from the usage API)</div><div class="value" data-testid="usage-total">${usage.data.value}</div></div>
        <div class="card"><div class="label">Events counted</div><div class="value" data-testid="usage-events">${usage.data.event_count}</div></div>
      </div>
      <${UsageChart} data=${usageSeries(usage.data.items)} window=${range.window} range=${[Date.parse(`${range.from}T00:00:00Z`), Date.parse(`${range.to}T00:00:00Z`)]} />` : null}`
}
