// Customers: search by external id or email, paged through the API.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { call, PAGE_SIZE, type Page } from '../api.js'
import { useSession } from '../context.js'
import { href, navigate } from '../router.js'
import { dateTime, Pager, Status, useLoad } from '../ui.js'

export interface Customer {
  id: string
  external_id: string
  name: string | null
  email: string | null
  created_at: string
}

export function CustomersPage({ query }: { query: URLSearchParams }): VNode {
  const { client } = useSession()
  const externalId = query.get('external_id') ?? ''
  const email = query.get('email') ?? ''
  const offset = Number(query.get('offset') ?? 0)
  const page = useLoad(() => call<Page<Customer>>(client.POST('/v1/customers/search', {
    body: { limit: PAGE_SIZE, offset, ...(externalId ? { external_id: externalId } : {}), ...(email ? { email } : {}) },
  })), [externalId, email, offset])
  const search = (e: Event) => {
    e.preventDefault()
    const f = new FormData(e.target as HTMLFormElement)
    navigate('/customers', { external_id: f.get('external_id') as string, email: f.get('email') as string })
  }
  return html`<h1>Customers</h1>
    <form class="filters" onSubmit=${search}>
      <label>External id <input name="external_id" value=${externalId} data-testid="customer-search" /></label>
      <label>Email <input name="email" type="email" value=${email} /></label>
      <button type="submit">Search</button>
    </form>
    <${Status} loaded=${page} />
    ${page.data ? html`<table data-testid="customers">
      <thead><tr><th>External id</th><th>Name</th><th>Email</th><th>Id</th><th>Created</th></tr></thead>
      <tbody>${page.data.items.map((c) => html`<tr>
        <td><a href=${href(`/customers/${c.id}`)}>${c.external_id}</a></td><td>${c.name ?? '—'}</td><td>${c.email ?? '—'}</td>
        <td class="muted id">${c.id}</td><td>${dateTime(c.created_at)}</td></tr>`)}</tbody>
    </table>
    <${Pager} ...${page.data.pagination} go=${(o: number) => navigate('/customers', { external_id: externalId, email, offset: o })} />` : null}`
}
