// The console's shell: sign-in with an API key, the navigation and the hash router.
import { html } from 'htm/preact'
import { render, type VNode } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { call, clientFor } from './api.js'
import { SessionContext, type Session } from './context.js'
import { loadKeyScope } from './key-scope.js'
import { useRoute } from './router.js'
import { forgetKey, storedKey, storeKey } from './session.js'
import { messageOf } from './ui.js'
import { CustomersPage } from './pages/customers.js'
import { CustomerPage } from './pages/customer.js'
import { InvoicesPage } from './pages/invoices.js'
import { InvoicePage } from './pages/invoice.js'
import { ExplainPage } from './pages/explain.js'
import { MetersPage } from './pages/meters.js'
import { MeterPage } from './pages/meter.js'
import { EventsPage } from './pages/events.js'
import { WebhooksPage } from './pages/webhooks.js'
import { HealthPage } from './pages/health.js'

/** Checks the key against the API (it lists the key's environments) before keeping it. */
async function openSession(apiKey: string): Promise<Session> {
  const client = clientFor(apiKey)
  await call(client.GET('/v1/environments'))
  return { client, scope: await loadKeyScope(client) }
}

function SignIn({ onSession }: { onSession: (s: Session) => void }): VNode {
  const [error, setError] = useState<string>()
  const [busy, setBusy] = useState(false)
  const submit = (e: Event) => {
    e.preventDefault()
    const key = (new FormData(e.target as HTMLFormElement).get('api_key') as string).trim()
    setBusy(true)
    openSession(key).then((s) => {
      storeKey(key)
      onSession(s)
    }, (err: unknown) => {
      setError(messageOf(err))
      setBusy(false)
    })
  }
  return html`<main class="signin">
    <h1>Meterline console</h1>
    <form onSubmit=${submit} autocomplete="off">
      <label>API key <input name="api_key" type="password" required autofocus data-testid="api-key" /></label>
      <button type="submit" disabled=${busy} data-testid="sign-in">Sign in</button>
    </form>
    ${error ? html`<div class="error" role="alert" data-testid="api-error">${error}</div>` : null}
    <p class="muted">The key stays in this tab (session storage) and is sent only to this server's API. A read-only key is enough to look.</p>
  </main>`
}

const NAV: [string, string][] = [['customers', 'Customers'], ['invoices', 'Invoices'], ['meters', 'Meters'], ['events', 'Events'], ['webhooks', 'Webhooks'], ['health', 'Health']]

function Page(): VNode {
  const { parts, query } = useRoute()
  const [section = 'customers', id, sub, subId] = parts
  switch (section) {
    case 'customers': return id ? html`<${CustomerPage} id=${id} query=${query} />` : html`<${CustomersPage} query=${query} />`
    case 'invoices':
      if (id && sub === 'lines' && subId) return html`<${ExplainPage} invoiceId=${id} lineId=${subId} query=${query} />`
      return id ? html`<${InvoicePage} id=${id} />` : html`<${InvoicesPage} query=${query} />`
    case 'meters': return id ? html`<${MeterPage} id=${id} />` : html`<${MetersPage} query=${query} />`
    case 'events': return html`<${EventsPage} query=${query} />`
    case 'webhooks': return html`<${WebhooksPage} query=${query} />`
    case 'health': return html`<${HealthPage} />`
    default: return html`<p>Unknown page.</p>`
  }
}

function Shell({ session, signOut }: { session: Session; signOut: () => void }): VNode {
  const { parts } = useRoute()
  const current = parts[0] ?? 'customers'
  return html`<${SessionContext.Provider} value=${session}>
    <header class="top">
      <strong>Meterline</strong>
      <nav>${NAV.map(([path, label]) => html`<a href=${`#/${path}`} class=${current === path ? 'active' : ''}>${label}</a>`)}</nav>
      ${session.scope === 'read-only' ? html`<span class="badge badge-readonly" data-testid="read-only">read-only</span>` : null}
      <button class="link" onClick=${signOut} data-testid="sign-out">Sign out</button>
    </header>
    <main class="page"><${Page} /></main>
  <//>`
}

function App(): VNode | null {
  const [session, setSession] = useState<Session | null>(null)
  const [restoring, setRestoring] = useState(() => storedKey() !== null)
  useEffect(() => {
    const key = storedKey()
    if (key) openSession(key).then(setSession, () => forgetKey()).finally(() => setRestoring(false))
  }, [])
  if (restoring) return html`<p class="muted">Signing in…</p>`
  if (!session) return html`<${SignIn} onSession=${setSession} />`
  return html`<${Shell} session=${session} signOut=${() => {
    forgetKey()
    setSession(null)
  }} />`
}

render(html`<${App} />`, document.getElementById('app')!)
