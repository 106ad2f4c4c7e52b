// Invoices: the search API's filters (status, payment status, customer, subscription, type,
// currency, period), newest first, paged through the API.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { call, PAGE_SIZE, type Page } from '../api.js'
import { useSession } from '../context.js'
import { href, navigate } from '../router.js'
import { Badge, date, money, Pager, Status, useLoad } from '../ui.js'

export interface InvoiceSummary {
  id: string
  invoice_number: string | null
  customer_id: string
  subscription_id: string | null
  invoice_type: string
  invoice_status: string
  payment_status: string
  currency: string
  total: string
  amount_due: string
  amount_remaining: string
  period_start: string | null
  period_end: string | null
  created_at: string
}

const FILTERS = ['invoice_status', 'payment_status', 'external_customer_id', 'customer_id', 'subscription_id', 'invoice_type', 'currency', 'period_start_gte', 'period_end_lte'] as const
type InvoiceStatus = 'DRAFT' | 'FINALIZED' | 'VOIDED' | 'SKIPPED'
type PaymentStatus = 'INITIATED' | 'PENDING' | 'PROCESSING' | 'SUCCEEDED' | 'OVERPAID' | 'FAILED' | 'REFUNDED' | 'PARTIALLY_REFUNDED'

export function InvoicesPage({ query }: { query: URLSearchParams }): VNode {
  const { client } = useSession()
  const f = Object.fromEntries(FILTERS.map((k) => [k, query.get(k) ?? ''])) as Record<(typeof FILTERS)[number], string>
  const offset = Number(query.get('offset') ?? 0)
  const page = useLoad(() => call<Page<InvoiceSummary>>(client.POST('/v1/invoices/search', {
    body: {
      limit: PAGE_SIZE, offset, skip_line_items: true, sort: [{ field: 'created_at', direction: 'desc' }],
      ...(f.invoice_status ? { invoice_status: [f.invoice_status as InvoiceStatus] } : {}),
      ...(f.payment_status ? { payment_status: [f.payment_status as PaymentStatus] } : {}),
      ...(f.external_customer_id ? { external_customer_id: f.external_customer_id } : {}),
      ...(f.customer_id ? { customer_id: f.customer_id } : {}),
      ...(f.subscription_id ? { subscription_id: f.subscription_id } : {}),
      ...(f.invoice_type ? { invoice_type: f.invoice_type as 'SUBSCRIPTION' | 'ONE_OFF' | 'CREDIT' } : {}),
      ...(f.currency ? { currency: f.currency } : {}),
      ...(f.period_start_gte ? { period_start_gte: `${f.period_start_gte}T00:00:00Z` } : {}),
      ...(f.period_end_lte ? { period_end_lte: `${f.period_end_lte}T00:00:00Z` } : {}),
    },
  })), [...FILTERS.map((k) => f[k]), offset])
  const search = (e: Event) => {
    e.preventDefault()
    const data = new FormData(e.target as HTMLFormElement)
    navigate('/invoices', Object.fromEntries(FILTERS.map((k) => [k, ((data.get(k) as string | null) ?? '').trim()])))
  }
  const select = (name: string, options: string[]) => html`<select name=${name} value=${f[name as keyof typeof f]}><option value="">any</option>${options.map((o) => html`<option>${o}</option>`)}</select>`
  return html`<h1>Invoices</h1>
    <form class="filters" onSubmit=${search}>
      <label>Status ${select('invoice_status', ['DRAFT', 'FINALIZED', 'VOIDED', 'SKIPPED'])}</label>
      <label>Payment ${select('payment_status', ['INITIATED', 'PENDING', 'PROCESSING', 'SUCCEEDED', 'OVERPAID', 'FAILED', 'REFUNDED', 'PARTIALLY_REFUNDED'])}</label>
      <label>Type ${select('invoice_type', ['SUBSCRIPTION', 'ONE_OFF', 'CREDIT'])}</label>
      <label>External customer id <input name="external_customer_id" value=${f.external_customer_id} size="14" /></label>
      <label>Customer id <input name="customer_id" value=${f.customer_id} size="14" /></label>
      <label>Subscription id <input name="subscription_id" value=${f.subscription_id} size="14" /></label>
      <label>Currency <input name="currency" value=${f.currency} size="4" /></label>
      <label>Period from <input type="date" name="period_start_gte" value=${f.period_start_gte} /></label>
      <label>Period to <input type="date" name="period_end_lte" value=${f.period_end_lte} /></label>
      <button type="submit">Search</button>
    </form>
    <${Status} loaded=${page} />
    ${page.data ? html`<table data-testid="invoices">
      <thead><tr><th>Number</th><th>Status</th><th>Payment</th><th>Type</th><th>Period</th><th class="num">Total</th><th class="num">Due</th><th>Customer</th></tr></thead>
      <tbody>${page.data.items.map((i) => html`<tr>
        <td class="id"><a href=${href(`/invoices/${i.id}`)}>${i.invoice_number ?? i.id}</a></td><td><${Badge} value=${i.invoice_status} /></td>
        <td><${Badge} value=${i.payment_status} /></td><td>${i.invoice_type}</td><td class="nowrap">${date(i.period_start)} – ${date(i.period_end)}</td>
        <td class="num">${money(i.total, i.currency)}</td><td class="num">${money(i.amount_due, i.currency)}</td>
        <td class="id"><a href=${href(`/customers/${i.customer_id}`)}>${i.customer_id}</a></td></tr>`)}</tbody>
    </table>
    <${Pager} ...${page.data.pagination} go=${(o: number) => navigate('/invoices', { ...f, offset: o })} />` : null}`
}
