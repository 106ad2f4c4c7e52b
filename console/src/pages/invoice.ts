// One invoice: amounts, lines (each usage line links to its explain trail), taxes, coupons,
// prepaid credits and the PDF (fetched with the key, then opened from memory).
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { useState } from 'preact/hooks'
import { call } from '../api.js'
import { useSession } from '../context.js'
import { href } from '../router.js'
import { Badge, date, dateTime, ErrorBox, messageOf, money, Status, useLoad } from '../ui.js'
import type { InvoiceSummary } from './invoices.js'

interface Line {
  id: string
  display_name: string | null
  price_type: string | null
  meter_id: string | null
  quantity: string
  amount: string
  line_item_discount: string
  invoice_level_discount: string
  prepaid_credits_applied: string
  period_start: string | null
  period_end: string | null
}
interface CouponApplication { id: string; coupon_id: string; invoice_line_item_id: string | null; discounted_amount: string; original_price: string; final_price: string; discount_percentage: string | null }
interface AppliedTax { id: string; tax_amount: string; taxable_amount: string; tax_rate: { name: string; code: string; percentage_value: string | null; fixed_value: string | null } | null }
export interface Invoice extends InvoiceSummary {
  subtotal: string
  total_discount: string
  total_tax: string
  total_prepaid_credits_applied: string
  amount_paid: string
  billing_reason: string
  issue_date: string | null
  due_date: string | null
  finalized_at: string | null
  line_items: Line[]
  coupon_applications: CouponApplication[]
  taxes: AppliedTax[]
}

function PdfButton({ id }: { id: string }): VNode {
  const { client } = useSession()
  const [error, setError] = useState<string>()
  const open = async () => {
    setError(undefined)
    try {
      const { data, error: e, response } = await client.GET('/v1/invoices/{id}/pdf', { params: { path: { id } }, parseAs: 'blob' })
      if (e !== undefined || !response.ok || !(data instanceof Blob)) throw new Error((e as { message?: string } | undefined)?.message ?? `${response.status}`)
      window.open(URL.createObjectURL(data), '_blank')
    } catch (err) {
      setError(messageOf(err))
    }
  }
  return html`<button onClick=${open} data-testid="invoice-pdf">PDF</button><${ErrorBox} error=${error} />`
}

export function InvoicePage({ id }: { id: string }): VNode {
  const { client } = useSession()
  const inv = useLoad(() => call<Invoice>(client.GET('/v1/invoices/{id}', { params: { path: { id } } })), [id])
  if (!inv.data) return html`<h1>Invoice</h1><${Status} loaded=${inv} />`
  const i = inv.data
  const m = (a: string | null | undefined) => money(a, i.currency)
  return html`<h1 data-testid="invoice-title">Invoice ${i.invoice_number ?? i.id} <${Badge} value=${i.invoice_status} /> <${Badge} value=${i.payment_status} /></h1>
    <dl class="fields">
      <dt>Customer</dt><dd><a href=${href(`/customers/${i.customer_id}`)}>${i.customer_id}</a></dd><dt>Subscription</dt><dd>${i.subscription_id ?? '—'}</dd>
      <dt>Period</dt><dd>${date(i.period_start)} – ${date(i.period_end)}</dd><dt>Reason</dt><dd>${i.billing_reason}</dd>
      <dt>Issued</dt><dd>${dateTime(i.issue_date)}</dd><dt>Due</dt><dd>${dateTime(i.due_date)}</dd>
      <dt>Subtotal</dt><dd>${m(i.subtotal)}</dd><dt>Discounts</dt><dd>${m(i.total_discount)}</dd>
      <dt>Tax</dt><dd>${m(i.total_tax)}</dd><dt>Prepaid credits</dt><dd>${m(i.total_prepaid_credits_applied)}</dd>
      <dt>Total</dt><dd><strong data-testid="invoice-total">${m(i.total)}</strong></dd><dt>Amount due</dt><dd>${m(i.amount_due)} (paid ${m(i.amount_paid)})</dd>
    </dl>
    <p><${PdfButton} id=${i.id} /></p>
    <h2>Lines</h2>
    <table data-testid="invoice-lines">
      <thead><tr><th>Line</th><th>Type</th><th>Period</th><th class="num">Quantity</th><th class="num">Amount</th><th class="num">Discount (line / invoice)</th><th class="num">Credits</th><th></th></tr></thead>
      <tbody>${i.line_items.map((l) => html`<tr>
        <td>${l.display_name ?? l.id}</td><td>${l.price_type ?? '—'}</td><td>${date(l.period_start)} – ${date(l.period_end)}</td>
        <td class="num">${l.quantity}</td><td class="num">${m(l.amount)}</td>
        <td class="num">${l.line_item_discount} / ${l.invoice_level_discount}</td>
        <td class="num">${m(l.prepaid_credits_applied)}</td>
        <td>${l.meter_id ? html`<a href=${href(`/invoices/${i.id}/lines/${l.id}`)} data-testid="explain-link">explain</a>` : null}</td></tr>`)}</tbody>
    </table>
    <h2>Taxes</h2>
    ${i.taxes.length === 0 ? html`<p class="muted">None.</p>` : html`<table data-testid="invoice-taxes">
      <thead><tr><th>Rate</th><th class="num">Taxable</th><th class="num">Tax</th></tr></thead>
      <tbody>${i.taxes.map((t) => html`<tr><td>${t.tax_rate ? `${t.tax_rate.name} (${t.tax_rate.percentage_value !== null ? `${t.tax_rate.percentage_value} %` : m(t.tax_rate.fixed_value)})` : '—'}</td>
        <td class="num">${m(t.taxable_amount)}</td><td class="num">${m(t.tax_amount)}</td></tr>`)}</tbody></table>`}
    <h2>Coupons</h2>
    ${i.coupon_applications.length === 0 ? html`<p class="muted">None.</p>` : html`<table data-testid="invoice-coupons">
      <thead><tr><th>Coupon</th><th>Applies to</th><th class="num">Before</th><th class="num">Discount</th><th class="num">After</th></tr></thead>
      <tbody>${i.coupon_applications.map((c) => html`<tr><td>${c.coupon_id}${c.discount_percentage ? ` (${c.discount_percentage} %)` : ''}</td>
        <td>${c.invoice_line_item_id ?? 'the invoice'}</td><td class="num">${m(c.original_price)}</td><td class="num">${m(c.discounted_amount)}</td><td class="num">${m(c.final_price)}</td></tr>`)}</tbody></table>`}`
}
