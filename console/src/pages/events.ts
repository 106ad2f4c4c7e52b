// The latest counted events of the environment (GET /v1/events), newest acknowledgement first:
// what a developer checks after wiring ingestion.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { call, PAGE_SIZE, type Page } from '../api.js'
import { useSession } from '../context.js'
import { navigate } from '../router.js'
import { dateTime, Pager, Status, useLoad } from '../ui.js'

interface Event { event_id: string; event_name: string; external_customer_id: string; timestamp: string; ingested_at: string; source: string; properties: Record<string, unknown> }

export function EventsPage({ query }: { query: URLSearchParams }): VNode {
  const { client } = useSession()
  const eventName = query.get('event_name') ?? ''
  const customer = query.get('external_customer_id') ?? ''
  const offset = Number(query.get('offset') ?? 0)
  const page = useLoad(() => call<Page<Event>>(client.GET('/v1/events', {
    params: { query: { limit: PAGE_SIZE, offset, ...(eventName ? { event_name: eventName } : {}), ...(customer ? { external_customer_id: customer } : {}) } },
  })), [eventName, customer, offset])
  const search = (e: SubmitEvent) => {
    e.preventDefault()
    const f = new FormData(e.target as HTMLFormElement)
    navigate('/events', { event_name: (f.get('event_name') as string).trim(), external_customer_id: (f.get('external_customer_id') as string).trim() })
  }
  return html`<h1>Events</h1>
    <form class="filters" onSubmit=${search}>
      <label>Event name <input name="event_name" value=${eventName} /></label>
      <label>External customer id <input name="external_customer_id" value=${customer} /></label>
      <button type="submit">Filter</button> <button type="button" onClick=${page.reload}>Refresh</button>
    </form>
    <p class="muted">Events counted by the aggregator, newest acknowledgement first; an event accepted a moment ago appears once it is counted.</p>
    <${Status} loaded=${page} />
    ${page.data ? html`<table data-testid="events">
      <thead><tr><th>Accepted</th><th>Event time</th><th>Name</th><th>Customer</th><th>Event id</th><th>Properties</th></tr></thead>
      <tbody>${page.data.items.map((v) => html`<tr><td>${dateTime(v.ingested_at)}</td><td>${dateTime(v.timestamp)}</td><td><code>${v.event_name}</code></td>
        <td>${v.external_customer_id}</td><td class="muted id">${v.event_id}</td><td><pre>${JSON.stringify(v.properties)}</pre></td></tr>`)}</tbody></table>
    <${Pager} ...${page.data.pagination} go=${(o: number) => navigate('/events', { event_name: eventName, external_customer_id: customer, offset: o })} />` : null}`
}
