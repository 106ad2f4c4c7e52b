// Invoice downloads through HTTP: the PDF (content via pdftotext, the per-version cache,
// force_generate) and the CSV exports (RFC 4180, parsed back), tenant isolation.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../platform/clock.js'
import { assertError } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { startTestPlatform, type TestPlatform } from '../../test/support/platform.js'
import { billDueSubscriptions } from '../billing/bill-due.js'
import { createTenant } from '../tenants/create-tenant.js'
import { sql } from '../../test/support/invoices.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
const CUSTOMER_NAME = 'Smith, "Bob" & Sons'
const DISPLAY_NAME = 'Platform fee, "Pro" plan'
let p: TestPlatform
let dir: string
before(async () => {
  p = await startTestPlatform({ services: ['billing-api'], clock })
  dir = mkdtempSync(join(tmpdir(), 'invoice-pdf-'))
})
after(async () => {
  await p?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

interface Download {
  status: number
  headers: Headers
  bytes: Buffer
  text: string
}

async function download(apiKey: string, method: 'GET' | 'POST', path: string, body?: unknown): Promise<Download> {
  const headers: Record<string, string> = { 'x-api-key': apiKey }
  if (body !== undefined) headers['content-type'] = 'application/json'
  const res = await fetch(p.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const bytes = Buffer.from(await res.arrayBuffer())
  return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') }
}

function pdfText(bytes: Buffer): string {
  const file = join(dir, `${Math.random().toString(36).slice(2)}.pdf`)
  writeFileSync(file, bytes)
  return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' })
}

/** A small RFC 4180 reader: quoted fields, doubled quotes, CRLF records. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(field)
      field = ''
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      i++
    } else field += c
  }
  assert.equal(field, '', 'the document ends with CRLF')
  assert.equal(row.length, 0)
  return rows
}

const records = (rows: string[][]) => rows.slice(1).map((r) => Object.fromEntries(rows[0].map((h, i) => [h, r[i]])))

/** A tenant with billing details, a customer with a tricky name, two billed months, August finalized. */
async function billedTenant() {
  clock.set(NOW)
  const tenant = await createTenant(p.ctx.orm.em.fork(), {
    name: 'Acme Metering Ltd',
    billing_details: {
      address: { address_line1: '1 Billing Street', address_city: 'Dublin', address_postal_code: 'D02', address_country: 'IE' },
      email: 'billing@acme.test',
      help_email: 'help@acme.test',
      phone: '+353 1 555 0100',
    },
  }, p.config.apiKeyHashing)
  const api = p.client(tenant.apiKey)
  const plan = await created(api.post('/v1/plans', {
    name: 'Fee',
    prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '25', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: DISPLAY_NAME }],
  }))
  const customer = await created(api.post('/v1/customers', {
    external_id: 'cust-42', name: CUSTOMER_NAME, address_line1: '9 Customer Road', address_city: 'Cork', address_country: 'IE',
  }))
  const sub = await created(api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: '2026-07-01T00:00:00Z' }))
  await billDueSubscriptions(p.ctx, { tenantId: tenant.tenantId })
  const ids = (await sql(p, 'SELECT id FROM invoices WHERE subscription_id = ? ORDER BY period_start', [sub.id])).map((r) => r.id as string)
  assert.equal(ids.length, 2, 'July and August are billed')
  const fin = await api.post(`/v1/invoices/${ids[1]}/finalize`, {})
  assert.equal(fin.status, 200, JSON.stringify(fin.body))
  return { tenant, api, customer, sub, draftId: ids[0], invoice: fin.body }
}

test('the PDF shows the invoice, is cached per version, and force_generate regenerates it', async () => {
  const { tenant, api, invoice } = await billedTenant()
  assert.equal(invoice.invoice_number, 'INV-000001')
  const path = `/v1/invoices/${invoice.id}/pdf`

  const first = await download(tenant.apiKey, 'GET', path)
  assert.equal(first.status, 200, first.text)
  assert.equal(first.headers.get('content-type'), 'application/pdf')
  assert.equal(first.headers.get('x-document-cache'), 'miss')
  assert.equal(first.bytes.subarray(0, 5).toString(), '%PDF-')
  const text = pdfText(first.bytes)
  for (const expected of [
    'INV-000001', 'Acme Metering Ltd', '1 Billing Street', 'billing@acme.test', 'help@acme.test', CUSTOMER_NAME, 'cust-42',
    '9 Customer Road', DISPLAY_NAME, 'FINALIZED', '2026-09-15', '2026-08-01 to 2026-09-01', '25.00 USD', '0.00 USD', 'USD',
  ]) assert.ok(text.includes(expected), `the PDF shows ${JSON.stringify(expected)}:\n${text}`)
  assert.match(text, /Subtotal\s+25\.00 USD/)
  assert.match(text, /Total\s+25\.00 USD/)
  assert.match(text, /Amount paid\s+0\.00 USD/)
  assert.match(text, /Amount remaining\s+25\.00 USD/)

  const second = await download(tenant.apiKey, 'GET', path)
  assert.equal(second.headers.get('x-document-cache'), 'hit')
  assert.ok(second.bytes.equals(first.bytes), 'the cached PDF is served as is')

  const forced = await download(tenant.apiKey, 'GET', `${path}?force_generate=true`)
  assert.equal(forced.status, 200)
  assert.equal(forced.headers.get('x-document-cache'), 'miss')
  // Rendering is deterministic: the same invoice version gives the same bytes.
  assert.ok(forced.bytes.equals(first.bytes), 'the regenerated PDF is identical')
  assert.equal((await download(tenant.apiKey, 'GET', `${path}?force_generate=false`)).headers.get('x-document-cache'), 'hit')

  // A payment bumps the version: the next download renders anew and shows it.
  const paid = await api.post(`/v1/invoices/${invoice.id}/payments`, { amount: '10.00' })
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  assert.equal(paid.body.invoice.version, invoice.version + 1)
  const afterPayment = await download(tenant.apiKey, 'GET', path)
  assert.equal(afterPayment.headers.get('x-document-cache'), 'miss')
  const paidText = pdfText(afterPayment.bytes)
  assert.match(paidText, /Amount paid\s+10\.00 USD/)
  assert.match(paidText, /Amount remaining\s+15\.00 USD/)
  assert.equal((await download(tenant.apiKey, 'GET', path)).headers.get('x-document-cache'), 'hit')
  const rows = await sql(p, 'SELECT invoice_version, tenant_id FROM invoice_documents WHERE invoice_id = ?', [invoice.id])
  assert.deepEqual(rows, [{ invoice_version: invoice.version + 1, tenant_id: tenant.tenantId }])
})

test('a draft PDF is titled DRAFT', async () => {
  const { tenant, draftId } = await billedTenant()
  const res = await download(tenant.apiKey, 'GET', `/v1/invoices/${draftId}/pdf`)
  assert.equal(res.status, 200)
  const text = pdfText(res.bytes)
  assert.ok(text.includes('DRAFT'), text)
  assert.ok(!text.includes('INV-'), text)
  assert.ok(text.includes('2026-07-01 to 2026-08-01'), text)
})

test('the line-item CSV round-trips the tricky names and exact amounts', async () => {
  const { tenant, invoice } = await billedTenant()
  const res = await download(tenant.apiKey, 'GET', `/v1/invoices/${invoice.id}/csv`)
  assert.equal(res.status, 200, res.text)
  assert.match(res.headers.get('content-type') ?? '', /^text\/csv/)
  assert.equal(res.headers.get('content-disposition'), 'attachment; filename="invoice-INV-000001.csv"')
  const rows = parseCsv(res.text)
  assert.deepEqual(rows[0], [
    'line_item_id', 'display_name', 'price_type', 'meter_id', 'period_start', 'period_end', 'quantity', 'adjusted_entitlement_quantity',
    'amount', 'line_item_discount', 'invoice_level_discount', 'prepaid_credits_applied', 'currency',
  ])
  const [line] = invoice.line_items
  assert.deepEqual(records(rows), [{
    line_item_id: line.id, display_name: DISPLAY_NAME, price_type: 'FIXED', meter_id: '', period_start: '2026-08-01T00:00:00.000Z',
    period_end: '2026-09-01T00:00:00.000Z', quantity: line.quantity, adjusted_entitlement_quantity: '', amount: '25.00',
    line_item_discount: '0.00', invoice_level_discount: '0.00', prepaid_credits_applied: '0.00', currency: 'USD',
  }])
  assert.ok(res.text.includes(`"Platform fee, ""Pro"" plan"`), 'quoted with doubled quotes')
})

test('the search CSV has one row per matching invoice, the same as the JSON search', async () => {
  const { tenant, api, customer, sub, draftId, invoice } = await billedTenant()
  // The export ignores pagination: every match, in the search's order.
  const all = await download(tenant.apiKey, 'POST', '/v1/invoices/search/csv', { limit: 1 })
  assert.equal(all.status, 200, all.text)
  assert.equal(all.headers.get('content-disposition'), 'attachment; filename="invoices.csv"')
  const json = (await api.post('/v1/invoices/search', {})).body
  const rows = parseCsv(all.text)
  assert.equal(rows.length - 1, json.pagination.total)
  assert.deepEqual(records(rows).map((r) => r.id), json.items.map((i: any) => i.id))

  const finalized = await download(tenant.apiKey, 'POST', '/v1/invoices/search/csv', { invoice_status: ['FINALIZED'] })
  const finalizedJson = (await api.post('/v1/invoices/search', { invoice_status: ['FINALIZED'] })).body
  const recs = records(parseCsv(finalized.text))
  assert.equal(recs.length, finalizedJson.pagination.total)
  assert.deepEqual(recs, [{
    id: invoice.id, invoice_number: 'INV-000001', customer_id: customer.id, subscription_id: sub.id, invoice_status: 'FINALIZED',
    payment_status: 'PENDING', currency: 'USD', period_start: '2026-08-01T00:00:00.000Z', period_end: '2026-09-01T00:00:00.000Z',
    subtotal: '25.00', total_discount: '0.00', total_tax: '0.00', total_prepaid_credits_applied: '0.00', total: '25.00',
    amount_due: '25.00', amount_paid: '0.00', amount_remaining: '25.00', created_at: invoice.created_at,
  }])
  const drafts = records(parseCsv((await download(tenant.apiKey, 'POST', '/v1/invoices/search/csv', { invoice_status: ['DRAFT'] })).text))
  assert.deepEqual(drafts.map((r) => [r.id, r.invoice_number]), [[draftId, '']])

  const bad = await api.post('/v1/invoices/search/csv', { invoice_status: ['NOPE'] })
  assertError(bad, 400, 'validation_error')
})

test('other tenants and unknown ids get 404 for every download', async () => {
  const { invoice } = await billedTenant()
  const other = await p.newTenant()
  assertError(await other.api.get(`/v1/invoices/${invoice.id}/pdf`), 404, 'not_found')
  assertError(await other.api.get(`/v1/invoices/${invoice.id}/pdf?force_generate=true`), 404, 'not_found')
  assertError(await other.api.get(`/v1/invoices/${invoice.id}/csv`), 404, 'not_found')
  assertError(await other.api.get('/v1/invoices/inv_missing/pdf'), 404, 'not_found')
  const theirs = records(parseCsv((await download(other.apiKey, 'POST', '/v1/invoices/search/csv', {})).text))
  assert.deepEqual(theirs, [])
  assertError(await other.api.get(`/v1/invoices/${invoice.id}/pdf?force_generate=maybe`), 400, 'validation_error')
})
