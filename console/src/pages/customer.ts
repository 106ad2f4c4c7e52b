// One customer: its subscriptions, credit grants and wallets, entitlements with live usage
// against their limits, and the usage chart per meter.
import { html } from 'htm/preact'
import type { VNode } from 'preact'
import { call, type Page } from '../api.js'
import { useSession } from '../context.js'
import { href, navigate } from '../router.js'
import { Badge, date, dateTime, ErrorBox, Status, useLoad } from '../ui.js'
import type { Customer } from './customers.js'
import { defaultRange, UsagePanel, useMeters, type UsageRange } from './usage-panel.js'

interface Subscription {
  id: string
  plan_id: string
  subscription_status: string
  currency: string
  current_period_start: string | null
  current_period_end: string | null
  start_date: string | null
  billing_period?: string
}
interface CreditGrant { id: string; name: string; subscription_id: string | null; credits: string; period: string | null; start_date: string | null; end_date: string | null }
interface Wallet { id: string; name: string | null; currency: string; balance: string; currency_balance: string; wallet_type: string }
interface Feature {
  feature_id: string
  feature_lookup_key: string
  feature_type: string
  has_access: boolean
  usage_limit: string | null
  is_soft_limit: boolean
  usage: string | null
  remaining: string | null
  period_start: string | null
  period_end: string | null
}
interface UsageSummary { features: Feature[]; projected_amounts: { currency: string; amount: string }[]; usage_as_of: string | null }

function LimitBar({ usage, limit }: { usage: string | null; limit: string | null }): VNode | null {
  if (usage === null || limit === null || Number(limit) <= 0) return null
  const share = Number(usage) / Number(limit)
  return html`<div class=${`meter-bar${share > 1 ? ' over' : ''}`} title=${`${Math.round(share * 100)} %`}><div style=${`width:${Math.min(100, share * 100)}%`}></div></div>`
}

function Entitlements({ id }: { id: string }): VNode {
  const { client } = useSession()
  const s = useLoad(() => call<UsageSummary>(client.GET('/v1/customers/{id}/usage-summary', { params: { path: { id } } })), [id])
  return html`<h2>Entitlements, live usage against limits</h2>
    <${Status} loaded=${s} />
    ${s.data ? html`<p class="muted">Usage as of ${dateTime(s.data.usage_as_of)}; projected this period: ${s.data.projected_amounts.map((a) => `${a.amount} ${a.currency}`).join(', ') || '—'}</p>
      ${s.data.features.length === 0 ? html`<p class="muted">No features granted.</p>` : html`<table data-testid="entitlements">
        <thead><tr><th>Feature</th><th>Type</th><th>Access</th><th class="num">Usage</th><th class="num">Limit</th><th></th><th class="num">Remaining</th><th>Period</th></tr></thead>
        <tbody>${s.data.features.map((f) => html`<tr>
          <td>${f.feature_lookup_key}</td><td>${f.feature_type}</td><td>${f.has_access ? 'yes' : html`<span class="bad">no</span>`}</td>
          <td class="num">${f.usage ?? '—'}</td><td class="num">${f.usage_limit ?? 'unlimited'}${f.is_soft_limit ? ' (soft)' : ''}</td>
          <td><${LimitBar} usage=${f.usage} limit=${f.usage_limit} /></td><td class="num">${f.remaining ?? '—'}</td>
          <td>${date(f.period_start)} – ${date(f.period_end)}</td></tr>`)}</tbody></table>`}` : null}`
}

function Subscriptions({ id }: { id: string }): VNode {
  const { client } = useSession()
  const subs = useLoad(async () => {
    const page = await call<Page<Subscription>>(client.GET('/v1/subscriptions', { params: { query: { customer_id: id, limit: 50, offset: 0 } } }))
    const grants = await Promise.all(page.items.map((s) => call<Page<CreditGrant>>(client.GET('/v1/creditgrants', { params: { query: { subscription_id: s.id, limit: 50, offset: 0 } } }))))
    return { page, grants: grants.flatMap((g) => g.items) }
  }, [id])
  return html`<h2>Subscriptions</h2>
    <${Status} loaded=${subs} />
    ${subs.data ? html`<table data-testid="subscriptions">
      <thead><tr><th>Id</th><th>Plan</th><th>Status</th><th>Currency</th><th>Current period</th><th>Invoices</th></tr></thead>
      <tbody>${subs.data.page.items.map((s) => html`<tr>
        <td class="id">${s.id}</td><td class="id">${s.plan_id}</td><td><${Badge} value=${s.subscription_status} /></td><td>${s.currency}</td>
        <td>${date(s.current_period_start)} – ${date(s.current_period_end)}</td>
        <td><a href=${href('/invoices', { subscription_id: s.id })}>invoices</a></td></tr>`)}</tbody></table>
      ${subs.data.page.pagination.total > subs.data.page.items.length ? html`<p class="muted">First ${subs.data.page.items.length} of ${subs.data.page.pagination.total}.</p>` : null}
      <h2>Credit grants</h2>
      ${subs.data.grants.length === 0 ? html`<p class="muted">None.</p>` : html`<table data-testid="credit-grants">
        <thead><tr><th>Name</th><th>Subscription</th><th class="num">Credits</th><th>Period</th><th>From</th><th>Until</th></tr></thead>
        <tbody>${subs.data.grants.map((g) => html`<tr><td>${g.name}</td><td class="id">${g.subscription_id}</td><td class="num">${g.credits}</td><td>${g.period ?? 'once'}</td><td>${date(g.start_date)}</td><td>${date(g.end_date)}</td></tr>`)}</tbody></table>`}` : null}`
}

function Wallets({ id }: { id: string }): VNode {
  const { client } = useSession()
  const w = useLoad(() => call<Page<Wallet>>(client.GET('/v1/wallets', { params: { query: { customer_id: id, limit: 50, offset: 0 } } })), [id])
  return html`<h2>Wallets</h2>
    <${Status} loaded=${w} />
    ${w.data ? (w.data.items.length === 0 ? html`<p class="muted">None.</p>` : html`<table data-testid="wallets">
      <thead><tr><th>Name</th><th>Type</th><th class="num">Balance (credits)</th><th class="num">Balance</th></tr></thead>
      <tbody>${w.data.items.map((x) => html`<tr><td>${x.name ?? x.id}</td><td>${x.wallet_type}</td><td class="num">${x.balance}</td><td class="num">${x.currency_balance} ${x.currency}</td></tr>`)}</tbody></table>`) : null}`
}

export function CustomerPage({ id, query }: { id: string; query: URLSearchParams }): VNode {
  const { client } = useSession()
  const customer = useLoad(() => call<Customer>(client.GET('/v1/customers/{id}', { params: { path: { id } } })), [id])
  const meters = useMeters()
  if (customer.error) return html`<h1>Customer</h1><${ErrorBox} error=${customer.error} />`
  if (!customer.data) return html`<p class="muted">Loading…</p>`
  const c = customer.data
  const change = (r: UsageRange) => navigate(`/customers/${id}`, { meter: r.meterId, from: r.from, to: r.to, window: r.window, group_by: r.groupBy })
  return html`<h1 data-testid="customer-title">${c.name ?? c.external_id}</h1>
    <dl class="fields">
      <dt>External id</dt><dd>${c.external_id}</dd><dt>Id</dt><dd>${c.id}</dd>
      <dt>Email</dt><dd>${c.email ?? '—'}</dd><dt>Created</dt><dd>${dateTime(c.created_at)}</dd>
    </dl>
    <h2>Usage</h2>
    <${Status} loaded=${meters} />
    ${meters.data ? html`<${UsagePanel} externalCustomerId=${c.external_id} meters=${meters.data.items} range=${defaultRange(query, meters.data.items)} onChange=${change} />` : null}
    <${Entitlements} id=${id} />
    <${Subscriptions} id=${id} />
    <${Wallets} id=${id} />
    <p><a href=${href('/invoices', { customer_id: id })}>Invoices of this customer →</a></p>`
}
