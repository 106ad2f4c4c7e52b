// The explain trail of one usage line as a reader follows it: which meter and events, the
// quantity per window, the tiers that priced it, the discounts and credits, and the raw
// events behind it page by page (the API's cursor).
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { call } from '../api.js'
import { UsageChart } from '../chart.js'
import { useSession } from '../context.js'
import { href, navigate } from '../router.js'
import { dateTime, money, Status, useLoad } from '../ui.js'
import { usageSeries } from '../usage-series.js'

interface Step { tier: number | null; from: string; to: string | null; quantity: string; unit_amount: string; flat_amount: string; amount: string }
interface Explain {
  display_name: string | null
  currency: string
  meter: { id: string; name: string; event_name: string; aggregation: { type: string; field?: string; expression?: string } }
  period: { start: string; end: string }
  external_customer_ids: string[]
  quantity: { measured: string; event_count: number; line_quantity: string; priced_quantity: string; window_size: string; buckets: { window_start: string | null; value: string; event_count: number }[] }
  pricing: { billing_model: string; tier_mode: string | null; billed_quantity: string; unrounded: string; amount: string; proration: { seconds: number; of: number } | null; steps: Step[]; recomputed: boolean }
  discounts: { line_item_discount: string; invoice_level_discount: string; coupon_applications: { coupon_id: string; discounted_amount: string }[] }
  prepaid_credits_applied: string
  invoice_taxes: { tax_amount: string; tax_rate: { name: string } | null }[]
  amount: string
  explained_amount: string
  amount_matches: boolean
  events: { items: { event_id: string; external_customer_id: string; timestamp: string; value: string; source: string }[]; next_cursor: string | null }
}

function describe(a: Explain['meter']['aggregation']): string {
  const of = a.field ?? a.expression
  return of ? `${a.type} of ${of}` : a.type
}

export function ExplainPage({ invoiceId, lineId, query }: { invoiceId: string; lineId: string; query: URLSearchParams }): VNode {
  const { client } = useSession()
  const cursor = query.get('cursor') ?? undefined
  const window = query.get('window') === 'HOUR' ? 'HOUR' : 'DAY'
  const x = useLoad(() => call<Explain>(client.GET('/v1/invoices/{id}/lines/{line_id}/explain', {
    params: { path: { id: invoiceId, line_id: lineId }, query: { window_size: window, events_limit: 20, ...(cursor ? { events_cursor: cursor } : {}) } },
  })), [invoiceId, lineId, cursor, window])
  const back = html`<p><a href=${href(`/invoices/${invoiceId}`)}>← Invoice</a></p>`
  if (!x.data) return html`${back}<h1>Explain</h1><${Status} loaded=${x} />`
  const e = x.data
  const m = (a: string) => money(a, e.currency)
  const buckets = e.quantity.buckets.map((b) => ({ ...b, group_by: null }))
  return html`${back}
    <h1 data-testid="explain-title">Why ${e.display_name ?? 'this line'} is ${m(e.amount)}</h1>
    <ol class="explain" data-testid="explain-trail">
      <li><strong>Meter</strong>: ${e.meter.name} counts <code>${e.meter.event_name}</code> events, ${describe(e.meter.aggregation)}.</li>
      <li><strong>Period</strong>: ${dateTime(e.period.start)} to ${dateTime(e.period.end)}, customer ${e.external_customer_ids.join(', ')}.</li>
      <li><strong>Measured</strong>: <span data-testid="explain-measured">${e.quantity.measured}</span> from ${e.quantity.event_count} events; the line bills ${e.quantity.line_quantity}${e.quantity.priced_quantity !== e.quantity.line_quantity ? `, priced as ${e.quantity.priced_quantity} after entitlements` : ''}.</li>
      <li><strong>Priced</strong>: ${e.pricing.billing_model}${e.pricing.tier_mode ? ` (${e.pricing.tier_mode})` : ''} on ${e.pricing.billed_quantity}: ${m(e.pricing.unrounded)} before rounding, rounded once to <strong data-testid="explain-amount">${m(e.explained_amount)}</strong>${' '}${e.amount_matches ? html`<span class="ok">= the line's amount</span>` : html`<span class="bad">≠ the line's ${m(e.amount)} (usage changed after billing)</span>`}${e.pricing.proration ? `, prorated ${e.pricing.proration.seconds} of ${e.pricing.proration.of} seconds` : ''}.</li>
      <li><strong>Then</strong>: line discount ${m(e.discounts.line_item_discount)}, invoice discount ${m(e.discounts.invoice_level_discount)}, prepaid credits ${m(e.prepaid_credits_applied)}${e.invoice_taxes.length ? `; taxes apply to the invoice: ${e.invoice_taxes.map((t) => `${t.tax_rate?.name ?? 'tax'} ${m(t.tax_amount)}`).join(', ')}` : ''}.</li>
    </ol>
    <h2>Tiers</h2>
    <table class="steps" data-testid="explain-steps">
      <thead><tr><th>Step</th><th class="num">From</th><th class="num">To</th><th class="num">Quantity</th><th class="num">× unit price</th><th class="num">+ flat</th><th class="num">= Amount</th></tr></thead>
      <tbody>${e.pricing.steps.map((s) => html`<tr><td>${s.tier !== null ? `tier ${s.tier + 1}` : 'price'}</td>
        <td class="num">${s.from}</td><td class="num">${s.to ?? '∞'}</td><td class="num">${s.quantity}</td>
        <td class="num">${s.unit_amount}</td><td class="num">${s.flat_amount}</td><td class="num">${s.amount}</td></tr>`)}</tbody>
    </table>
    <h2>Quantity per ${window === 'HOUR' ? 'hour' : 'day'} <small><a href=${href(`/invoices/${invoiceId}/lines/${lineId}`, { window: window === 'DAY' ? 'HOUR' : 'DAY' })}>show per ${window === 'DAY' ? 'hour' : 'day'}</a></small></h2>
    <${UsageChart} data=${usageSeries(buckets)} window=${window} range=${[Date.parse(e.period.start), Date.parse(e.period.end)]} height=${200} />
    <h2>Raw events</h2>
    <table data-testid="explain-events">
      <thead><tr><th>Event id</th><th>Customer</th><th>Time</th><th class="num">Value</th><th>Source</th></tr></thead>
      <tbody>${e.events.items.map((v) => html`<tr><td>${v.event_id}</td><td>${v.external_customer_id}</td><td>${dateTime(v.timestamp)}</td><td class="num">${v.value}</td><td>${v.source || '—'}</td></tr>`)}</tbody>
    </table>
    <div class="pager">
      <button disabled=${!cursor} onClick=${() => navigate(`/invoices/${invoiceId}/lines/${lineId}`, { window })}>First page</button>
      <button disabled=${!e.events.next_cursor} data-testid="explain-next" onClick=${() => navigate(`/invoices/${invoiceId}/lines/${lineId}`, { window, cursor: e.events.next_cursor })}>Next events →</button>
    </div>`
}
