// Meters and their definitions.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { call, PAGE_SIZE, type Page } from '../api.js'
import { useSession } from '../context.js'
import { href, navigate } from '../router.js'
import { dateTime, Pager, Status, useLoad } from '../ui.js'
import type { Meter } from './usage-panel.js'

export function definition(m: Meter): string {
  const a = m.aggregation
  const of = a.field ?? a.expression
  return [
    `${a.type}${of ? ` of ${of}` : ''}`, a.multiplier ? `× ${a.multiplier}` : '', a.group_by ? `grouped by ${a.group_by}` : '',
    m.filters?.length ? `where ${m.filters.map((f) => `${f.key} in (${f.values.join(', ')})`).join(' and ')}` : '',
  ].filter(Boolean).join(' ')
}

export function MetersPage({ query }: { query: URLSearchParams }): VNode {
  const { client } = useSession()
  const offset = Number(query.get('offset') ?? 0)
  const page = useLoad(() => call<Page<Meter>>(client.GET('/v1/meters', { params: { query: { limit: PAGE_SIZE, offset } } })), [offset])
  return html`<h1>Meters</h1>
    <${Status} loaded=${page} />
    ${page.data ? html`<table data-testid="meters">
      <thead><tr><th>Name</th><th>Event</th><th>Definition</th><th>Resets</th><th>Created</th></tr></thead>
      <tbody>${page.data.items.map((m) => html`<tr><td><a href=${href(`/meters/${m.id}`)}>${m.name}</a></td><td><code>${m.event_name}</code></td>
        <td>${definition(m)}</td><td>${m.reset_usage ?? '—'}</td><td>${dateTime(m.created_at)}</td></tr>`)}</tbody></table>
    <${Pager} ...${page.data.pagination} go=${(o: number) => navigate('/meters', { offset: o })} />` : null}`
}
