// Webhook endpoints and recent deliveries (status, attempts, last response code), and resending
// a delivery that did not succeed.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { useState } from 'preact/hooks'
import { call, PAGE_SIZE, type Page } from '../api.js'
import { useSession } from '../context.js'
import { canWrite } from '../key-scope.js'
import { navigate } from '../router.js'
import { Badge, dateTime, ErrorBox, messageOf, Pager, Status, useLoad } from '../ui.js'

interface Endpoint { id: string; url: string; event_types: string[]; description: string | null; created_at: string }
interface Delivery { id: string; endpoint_id: string; event_name: string; delivery_status: string; attempts: number; last_status_code: number | null; last_error: string | null; delivered_at: string | null; created_at: string }

export function WebhooksPage({ query }: { query: URLSearchParams }): VNode {
  const { client, scope } = useSession()
  const status = query.get('delivery_status') ?? ''
  const offset = Number(query.get('offset') ?? 0)
  const [actionError, setActionError] = useState<string>()
  const endpoints = useLoad(() => call<Page<Endpoint>>(client.GET('/v1/webhooks/endpoints', { params: { query: { limit: 100, offset: 0 } } })), [])
  const deliveries = useLoad(() => call<Page<Delivery>>(client.GET('/v1/webhooks/deliveries', {
    params: { query: { limit: PAGE_SIZE, offset, ...(status ? { delivery_status: status as 'PENDING' | 'SUCCEEDED' | 'FAILED' } : {}) } },
  })), [status, offset])
  const resend = async (id: string) => {
    setActionError(undefined)
    try {
      await call(client.POST('/v1/webhooks/{id}/retry', { params: { path: { id } } }))
      deliveries.reload()
    } catch (err) {
      setActionError(messageOf(err))
    }
  }
  const urlOf = new Map((endpoints.data?.items ?? []).map((e) => [e.id, e.url]))
  return html`<h1>Webhooks</h1>
    <h2>Endpoints</h2>
    <${Status} loaded=${endpoints} />
    ${endpoints.data ? (endpoints.data.items.length === 0 ? html`<p class="muted">No endpoints.</p>` : html`<table data-testid="webhook-endpoints">
      <thead><tr><th>URL</th><th>Events</th><th>Description</th><th>Created</th></tr></thead>
      <tbody>${endpoints.data.items.map((e) => html`<tr><td>${e.url}</td><td>${e.event_types.length ? e.event_types.join(', ') : 'all'}</td><td>${e.description ?? '—'}</td><td>${dateTime(e.created_at)}</td></tr>`)}</tbody></table>`) : null}
    <h2>Recent deliveries</h2>
    <form class="filters" onSubmit=${(e: Event) => {
      e.preventDefault()
      navigate('/webhooks', { delivery_status: new FormData(e.target as HTMLFormElement).get('delivery_status') as string })
    }}>
      <label>Status <select name="delivery_status" value=${status}><option value="">any</option><option>PENDING</option><option>SUCCEEDED</option><option>FAILED</option></select></label>
      <button type="submit">Filter</button>
    </form>
    <${ErrorBox} error=${actionError} />
    <${Status} loaded=${deliveries} />
    ${deliveries.data ? html`<table data-testid="webhook-deliveries">
      <thead><tr><th>Created</th><th>Event</th><th>Endpoint</th><th>Status</th><th class="num">Attempts</th><th class="num">Response</th><th>Last error</th><th></th></tr></thead>
      <tbody>${deliveries.data.items.map((d) => html`<tr><td>${dateTime(d.created_at)}</td><td>${d.event_name}</td><td>${urlOf.get(d.endpoint_id) ?? d.endpoint_id}</td>
        <td><${Badge} value=${d.delivery_status} /></td><td class="num">${d.attempts}</td><td class="num">${d.last_status_code ?? '—'}</td><td>${d.last_error ?? ''}</td>
        <td>${canWrite(scope) && d.delivery_status !== 'SUCCEEDED' ? html`<button onClick=${() => void resend(d.id)} data-testid="resend">Resend</button>` : null}</td></tr>`)}</tbody></table>
    <${Pager} ...${deliveries.data.pagination} go=${(o: number) => navigate('/webhooks', { delivery_status: status, offset: o })} />` : null}`
}
