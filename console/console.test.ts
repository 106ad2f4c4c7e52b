// The console in a real browser (Debian's chromium through playwright-core) against a real
// platform: sign in, a customer's usage chart with the API's totals, an invoice and its explain
// trail, the other pages, and another tenant's key that sees none of it. Each page's screenshot
// is written to docs/console/ (linked from the README).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Page } from 'playwright-core'
import { ManualClock } from '../platform/clock.js'
import { newId } from '../platform/ids.js'
import { billDueSubscriptions } from '../billing-api/billing/bill-due.js'
import { launchChromium, type TestBrowser } from '../test/support/browser.js'
import { created, ingestAll, usage } from '../test/support/fixtures.js'
import { eventually, sqlOn, usePlatform } from '../test/support/platform.js'

const SHOTS = fileURLToPath(new URL('../docs/console/', import.meta.url))
const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })
let browser: TestBrowser

before(async () => {
  mkdirSync(SHOTS, { recursive: true })
  browser = await launchChromium()
})
after(async () => {
  await browser?.close()
})

const TIERS = [{ up_to: 100, unit_amount: '0.10' }, { up_to: 1000, unit_amount: '0.05' }, { up_to: null, unit_amount: '0.01' }]

/** A tenant with a metered customer billed for October: the explain test's hand-computed 57.50 line. */
async function billedTenant() {
  const t = await p.newTenant('Acme Cloud')
  const meter = await created(t.api.post('/v1/meters', { name: 'Units', event_name: 'job', aggregation: { type: 'SUM', field: 'units' } }))
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Tiered',
    prices: [
      { type: 'USAGE', billing_model: 'TIERED', tier_mode: 'SLAB', tiers: TIERS, meter_id: meter.id, currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Units' },
      { type: 'FIXED', billing_model: 'FLAT_FEE', amount: '5', currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Base' },
    ],
  }))
  const feature = await created(t.api.post('/v1/features', { name: 'Units', lookup_key: 'units', type: 'metered', meter_id: meter.id }))
  await created(t.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: plan.id, feature_id: feature.id, usage_limit: 2000, usage_reset_period: 'MONTHLY' }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme', name: 'Acme Corp', email: 'billing@acme.test' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'acme', plan_id: plan.id, currency: 'USD', start_date: '2026-10-01T00:00:00Z' }))
  await created(t.api.post('/v1/creditgrants', { name: 'Welcome credits', credits: '7', period: 'ONETIME', subscription_id: sub.id }))
  const wallet = await created(t.api.post('/v1/wallets', { customer_id: customer.id, currency: 'USD', name: 'Prepaid' }), 200)
  // A funded wallet: an empty prepaid one would close the metered feature (spend cap).
  assert.equal((await t.api.post(`/v1/wallets/${wallet.id}/top-up`, { credits: '40', transaction_reason: 'FREE_CREDIT', idempotency_key: 'welcome' })).status, 200)
  const ev = (id: string, units: number, ts: string, region: string, who = 'acme') => ({ event_id: id, event_name: 'job', external_customer_id: who, timestamp: ts, properties: { units, region } })
  await ingestAll(t.api, [
    ev('e1', 60, '2026-10-03T08:00:00Z', 'eu'), ev('e2', 90, '2026-10-03T09:30:15.250Z', 'eu'), ev('e3', 800, '2026-10-10T12:00:00Z', 'us'),
    ev('e4', 300, '2026-10-20T23:59:59.999Z', 'us'), ev('x1', 5000, '2026-10-05T00:00:00Z', 'eu', 'someone-else'),
  ])
  await eventually(async () => ((await usage(t.api, meter.id, {})).value === '6250' ? true : undefined), 'all events in ClickHouse')
  clock.set(new Date('2026-11-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const [listed] = (await t.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.items
  const invoice = (await t.api.get(`/v1/invoices/${listed.id}`)).body
  const line = invoice.line_items.find((l: any) => l.display_name === 'Units')
  assert.deepEqual([line.quantity, line.amount], ['1250', '57.50'])
  // Recent usage of another customer, for the meter's last 24 hours.
  const hoursAgo = (h: number) => new Date(Date.now() - h * 3_600_000).toISOString()
  await ingestAll(t.api, [ev('r1', 40, hoursAgo(2), 'eu', 'beta'), ev('r2', 25, hoursAgo(5), 'us', 'beta')])
  await eventually(async () => ((await usage(t.api, meter.id, {})).value === '6315' ? true : undefined), 'the recent events in ClickHouse')
  // A webhook endpoint and a delivery that failed, for the resend.
  const endpoint = await created(t.api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks', description: 'billing system' }))
  const deliveryId = newId('whdel')
  await sqlOn(p)(
    `INSERT INTO webhook_deliveries (id, tenant_id, environment_id, endpoint_id, event_id, event_name, payload, delivery_status, attempts, last_status_code, last_error)
     VALUES (?, ?, ?, ?, ?, 'invoice.drafted', '{}'::jsonb, 'FAILED', 5, 500, 'HTTP 500')`,
    [deliveryId, t.tenantId, t.environments.production, endpoint.id, newId('sev')],
  )
  return { t, meter, customer, invoice, line, deliveryId }
}

async function signIn(page: Page, apiKey: string) {
  await page.goto(`${p.url}/console/`)
  await page.fill('[data-testid=api-key]', apiKey)
  await page.click('[data-testid=sign-in]')
  await page.locator('header.top').waitFor()
}

const text = async (page: Page, testId: string) => (await page.locator(`[data-testid=${testId}]`).first().textContent())?.trim()
/** Writes the page's screenshot, after checking it fits a 1280 px laptop screen (no sideways scrolling). */
async function shot(page: Page, name: string) {
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 1280), `${name} fits 1280 px`)
  await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true })
}

test('console: sign in, a customer usage chart with the API totals, an invoice and its explain trail, every page; another tenant sees none of it', async () => {
  const { t, meter, customer, invoice, line, deliveryId } = await billedTenant()
  const page = await browser.context.newPage()
  const consoleErrors: string[] = []
  page.on('pageerror', (err) => consoleErrors.push(err.message))

  // A wrong key: the API's own message, and no session.
  await page.goto(`${p.url}/console/`)
  await shot(page, 'sign-in')
  await page.fill('[data-testid=api-key]', 'not-a-key')
  await page.click('[data-testid=sign-in]')
  const refused = (await p.client('not-a-key').get('/v1/environments')).body
  assert.match((await page.locator('[data-testid=api-error]').textContent())!, new RegExp(refused.message))

  await signIn(page, t.apiKey)
  // The key is kept in this tab's session storage only, never in the URL.
  assert.equal(await page.evaluate(() => sessionStorage.getItem('meterline.console.api_key')), t.apiKey)
  assert.equal(await page.evaluate(() => localStorage.length), 0)
  assert.ok(!page.url().includes(t.apiKey))
  assert.equal(await page.locator('[data-testid=read-only]').count(), 0)

  // Customers: search, then open the customer.
  await page.fill('[data-testid=customer-search]', 'acme')
  await page.press('[data-testid=customer-search]', 'Enter')
  await page.locator('[data-testid=customers] a', { hasText: 'acme' }).click()
  assert.equal(await text(page, 'customer-title'), 'Acme Corp')

  // The usage chart of October, per day: drawn, and its totals are the API's.
  await page.goto(`${p.url}/console/#/customers/${customer.id}?meter=${meter.id}&from=2026-10-01&to=2026-11-01&window=DAY`)
  await page.locator('[data-testid=usage-chart] canvas').waitFor()
  const api = await usage(t.api, meter.id, { external_customer_id: 'acme', start_time: '2026-10-01T00:00:00Z', end_time: '2026-11-01T00:00:00Z', window_size: 'DAY' })
  assert.equal(api.value, '1250')
  assert.equal(await text(page, 'usage-total'), api.value)
  assert.equal(await text(page, 'chart-sum'), api.value)
  assert.equal(await text(page, 'usage-events'), String(api.event_count))
  const chart = page.locator('[data-testid=usage-chart]')
  assert.equal(await chart.getAttribute('data-points'), String(api.items.length))
  const canvas = await page.locator('[data-testid=usage-chart] canvas').boundingBox()
  assert.ok(canvas && canvas.width > 500 && canvas.height > 100, 'the chart is drawn')
  // Live usage against the entitlement's limit, the subscription, its grant and the wallet.
  await page.locator('[data-testid=entitlements]').waitFor()
  const summary = (await t.api.get(`/v1/customers/${customer.id}/usage-summary`)).body
  const row = page.locator('[data-testid=entitlements] tbody tr').first()
  assert.match((await row.textContent())!, new RegExp(`units.*${summary.features[0].usage ?? '—'}.*2000`))
  await page.locator('[data-testid=credit-grants]', { hasText: 'Welcome credits' }).waitFor()
  await page.locator('[data-testid=wallets]', { hasText: 'Prepaid' }).waitFor()
  await page.locator('[data-testid=subscriptions] tbody tr').first().waitFor()
  await shot(page, 'customer')

  // Grouped by a property, per hour: a series per region, each sum the API's.
  await page.goto(`${p.url}/console/#/customers/${customer.id}?meter=${meter.id}&from=2026-10-01&to=2026-11-01&window=HOUR&group_by=region`)
  // The ungrouped chart also sums to 1250: wait for the grouped one's series.
  await page.locator('[data-testid=usage-chart] figcaption', { hasText: 'region=' }).waitFor()
  const grouped = await usage(t.api, meter.id, { external_customer_id: 'acme', start_time: '2026-10-01T00:00:00Z', end_time: '2026-11-01T00:00:00Z', window_size: 'HOUR', group_by: ['region'] })
  const caption = (await page.locator('[data-testid=usage-chart] figcaption').textContent())!
  for (const region of ['eu', 'us']) {
    const sum = grouped.items.filter((i: any) => i.group_by.region === region).reduce((a: number, i: any) => a + Number(i.value), 0)
    assert.match(caption, new RegExp(`region=${region}: ${sum}\\b`))
  }
  assert.equal(await chart.getAttribute('data-points'), String(new Set(grouped.items.map((i: any) => i.window_start)).size))

  // Invoices: search by customer, open the invoice, then the usage line's explain trail.
  await page.goto(`${p.url}/console/#/invoices?external_customer_id=acme`)
  await page.locator('[data-testid=invoices] tbody tr').first().waitFor()
  assert.equal(await page.locator('[data-testid=invoices] tbody tr').count(), 1)
  await shot(page, 'invoices')
  await page.locator('[data-testid=invoices] tbody tr a').first().click()
  assert.equal(await text(page, 'invoice-total'), `${invoice.total} USD`)
  const lines = (await page.locator('[data-testid=invoice-lines] tbody').textContent())!
  assert.match(lines, /Units.*1250.*57\.50 USD/)
  assert.match(lines, /Base.*5\.00 USD/)
  await shot(page, 'invoice')
  // The PDF is fetched with the key (a plain link could not send it) and opened from memory.
  const [pdf] = await Promise.all([browser.context.waitForEvent('page'), page.click('[data-testid=invoice-pdf]')])
  assert.match(pdf.url(), /^blob:/)
  await pdf.close()
  await page.locator('[data-testid=explain-link]').click()
  await page.locator('[data-testid=explain-trail]').waitFor()
  const x = (await t.api.get(`/v1/invoices/${invoice.id}/lines/${line.id}/explain?window_size=DAY&events_limit=20`)).body
  assert.equal(await text(page, 'explain-measured'), x.quantity.measured)
  assert.equal(await text(page, 'explain-amount'), `${x.explained_amount} USD`)
  assert.match((await page.locator('[data-testid=explain-trail]').textContent())!, /= the line's amount/)
  const steps = await page.locator('[data-testid=explain-steps] tbody tr').allTextContents()
  assert.deepEqual(steps.map((s) => s.replace(/\s+/g, ' ')), x.pricing.steps.map((s: any) => `tier ${s.tier + 1}${s.from}${s.to ?? '∞'}${s.quantity}${s.unit_amount}${s.flat_amount}${s.amount}`))
  const events = await page.locator('[data-testid=explain-events] tbody tr td:first-child').allTextContents()
  assert.deepEqual(events, x.events.items.map((e: any) => e.event_id))
  assert.deepEqual(events, ['e1', 'e2', 'e3', 'e4'])
  assert.equal(await text(page, 'chart-sum'), '1250')
  await shot(page, 'explain')

  // Meters, events, webhooks (resend a failed delivery), health.
  await page.goto(`${p.url}/console/#/meters`)
  await page.locator('[data-testid=meters]', { hasText: 'SUM of units' }).waitFor()
  await page.locator('[data-testid=meters] a', { hasText: 'Units' }).click()
  // The last 24 hours, per hour: the two recent events (65 units), drawn.
  assert.equal(await text(page, 'meter-total'), '65')
  await page.locator('[data-testid=usage-chart] canvas').waitFor()
  assert.deepEqual([await text(page, 'chart-sum'), await chart.getAttribute('data-points')], ['65', '2'])
  await shot(page, 'meter')
  await page.goto(`${p.url}/console/#/events`)
  await page.locator('[data-testid=events] tbody tr').first().waitFor()
  const listed = (await t.api.get('/v1/events?limit=25')).body
  assert.deepEqual(await page.locator('[data-testid=events] tbody tr td:nth-child(5)').allTextContents(), listed.items.map((e: any) => e.event_id))
  await shot(page, 'events')
  await page.goto(`${p.url}/console/#/webhooks`)
  await page.locator('[data-testid=webhook-deliveries]', { hasText: 'FAILED' }).waitFor()
  assert.match((await page.locator('[data-testid=webhook-deliveries] tbody tr').first().textContent())!, /invoice\.drafted.*127\.0\.0\.1:9\/hooks.*FAILED.*5.*500/)
  await shot(page, 'webhooks')
  await page.click('[data-testid=resend]')
  await page.locator('[data-testid=webhook-deliveries]', { hasText: 'PENDING' }).or(page.locator('[data-testid=api-error]')).waitFor()
  const resendError = page.locator('[data-testid=api-error]')
  if (await resendError.count()) assert.fail(`resend: ${await resendError.first().textContent()}`)
  assert.equal((await t.api.get(`/v1/webhooks/deliveries/${deliveryId}`)).body.delivery_status, 'PENDING')
  await page.goto(`${p.url}/console/#/health`)
  await page.locator('[data-testid=ingest-rate]').waitFor()
  assert.match((await text(page, 'events-accepted'))!, /^\d+$/)
  await page.locator('[data-testid=processes] tbody tr').first().waitFor()
  assert.match((await page.locator('[data-testid=processes] tbody tr').first().textContent())!, new RegExp(`^[a-z+-]+${process.pid}0running0`))
  // docs/console/health.png comes from the processes topology under load (test/faults/topology.test.ts):
  // this platform's manual clock shows no rates and hours-old freshness

  // A read-only key of the same environment: the console says so, shows the deliveries and offers no resend.
  await page.click('[data-testid=sign-out]')
  const viewer = await created(t.api.post('/v1/secrets/api/keys', { name: 'support', scope: 'read_only' }))
  await signIn(page, viewer.api_key)
  assert.equal(await page.locator('[data-testid=read-only]').count(), 1)
  await page.goto(`${p.url}/console/#/webhooks`)
  await page.locator('[data-testid=webhook-deliveries] tbody tr').first().waitFor()
  assert.equal(await page.locator('[data-testid=resend]').count(), 0)

  // Another tenant's key sees none of it: empty lists, and the API's not-found for every id.
  await page.click('[data-testid=sign-out]')
  const stranger = await p.newTenant('Someone else')
  await signIn(page, stranger.apiKey)
  await page.goto(`${p.url}/console/#/customers`)
  await page.locator('[data-testid=customers]').waitFor()
  assert.equal(await page.locator('[data-testid=customers] tbody tr').count(), 0)
  for (const [path, what] of [[`/customers/${customer.id}`, 'customer'], [`/invoices/${invoice.id}`, 'invoice'], [`/invoices/${invoice.id}/lines/${line.id}`, 'invoice'], [`/meters/${meter.id}`, 'meter']]) {
    await page.goto(`${p.url}/console/#${path}`)
    const error = (await page.locator('[data-testid=api-error]').first().textContent())!
    assert.match(error, new RegExp(`${what}.*not found.*\\(not_found, 404\\)`), `${path}: ${error}`)
  }
  for (const [path, table] of [['/invoices', 'invoices'], ['/events', 'events'], ['/meters', 'meters']]) {
    await page.goto(`${p.url}/console/#${path}`)
    await page.locator(`[data-testid=${table}]`).waitFor()
    assert.equal(await page.locator(`[data-testid=${table}] tbody tr`).count(), 0, path)
  }
  await page.goto(`${p.url}/console/#/webhooks`)
  await page.locator('[data-testid=webhook-deliveries]').waitFor()
  assert.equal(await page.locator('[data-testid=webhook-deliveries] tbody tr').count(), 0)
  assert.deepEqual(consoleErrors, [])
  await page.close()
})
