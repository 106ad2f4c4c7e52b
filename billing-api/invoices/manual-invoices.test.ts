// Manual invoices through HTTP: ONE_OFF and CREDIT creation (exact totals, the sign rule,
// invoice.drafted), finalization by the usual path, refusals that write nothing, and
// PUT /invoices/{id} (issue_date on the PDF, version conflicts, states).
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ManualClock } from '../../platform/clock.js'
import { assertError, countRows } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { startTestPlatform, type TestPlatform } from '../../test/support/platform.js'
import { manualInvoiceTotals } from './manual-invoices.js'
import { eventNames, sql } from '../../test/support/invoices.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
let p: TestPlatform
let dir: string
before(async () => {
  p = await startTestPlatform({ services: ['billing-api'], clock })
  dir = mkdtempSync(join(tmpdir(), 'manual-invoice-'))
})
after(async () => {
  await p?.stop()
  if (dir) rmSync(dir, { recursive: true, force: true })
})

async function setup() {
  const t = await p.newTenant()
  const customer = await created(t.api.post('/v1/customers', { external_id: `c-${Math.random().toString(36).slice(2)}` }))
  return { t, customer }
}

test('manualInvoiceTotals: exact sums, CREDIT negated, currency decimals enforced', () => {
  assert.deepEqual(manualInvoiceTotals('ONE_OFF', 'USD', ['19.99', '0.01', '100']), { amounts: ['19.99', '0.01', '100.00'], subtotal: '120.00', amount_due: '120.00' })
  assert.deepEqual(manualInvoiceTotals('CREDIT', 'EUR', ['10.5', '0.25']), { amounts: ['-10.50', '-0.25'], subtotal: '-10.75', amount_due: '0.00' })
  assert.deepEqual(manualInvoiceTotals('ONE_OFF', 'JPY', ['1200', '1']), { amounts: ['1200', '1'], subtotal: '1201', amount_due: '1201' })
  assert.throws(() => manualInvoiceTotals('ONE_OFF', 'JPY', ['10.5']), /more decimals than JPY/)
  assert.throws(() => manualInvoiceTotals('ONE_OFF', 'USD', ['0.001']), /more decimals than USD/)
})

test('a ONE_OFF invoice is created DRAFT with exact totals, published once, and finalized by the usual path', async () => {
  clock.set(NOW)
  const { t, customer } = await setup()
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Setup',
    prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '50', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE' }],
  }))
  const priceId = plan.prices[0].id
  const res = await t.api.post('/v1/invoices', {
    customer_id: customer.id, invoice_type: 'ONE_OFF', currency: 'USD', description: 'Onboarding',
    metadata: { po: 'PO-7' }, due_date: '2026-10-15T00:00:00Z',
    line_items: [
      { display_name: 'Setup fee', amount: '19.99', price_id: priceId },
      { display_name: 'Training (3 h)', amount: '0.01', quantity: '3' },
      { display_name: 'Consulting', amount: '100' },
    ],
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const inv = res.body
  assert.deepEqual(
    [inv.invoice_type, inv.invoice_status, inv.payment_status, inv.billing_reason, inv.currency, inv.subscription_id, inv.invoice_number, inv.version],
    ['ONE_OFF', 'DRAFT', 'PENDING', 'MANUAL', 'USD', null, null, 1],
  )
  assert.deepEqual(
    [inv.subtotal, inv.total, inv.amount_due, inv.amount_remaining, inv.amount_paid, inv.total_discount, inv.total_tax],
    ['120.00', '120.00', '120.00', '120.00', '0.00', '0.00', '0.00'],
  )
  assert.equal(inv.description, 'Onboarding')
  assert.deepEqual(inv.metadata, { po: 'PO-7' })
  assert.equal(inv.due_date, '2026-10-15T00:00:00.000Z')
  assert.deepEqual(
    inv.line_items.map((l: any) => [l.display_name, l.amount, l.quantity, l.price_id, l.price_type]),
    [['Setup fee', '19.99', '1', priceId, 'FIXED'], ['Training (3 h)', '0.01', '3', null, null], ['Consulting', '100.00', '1', null, null]],
  )
  assert.deepEqual(await eventNames(p, inv.id), ['invoice.drafted'])

  clock.set(new Date('2026-09-16T08:00:00Z'))
  const fin = await t.api.post(`/v1/invoices/${inv.id}/finalize`, {})
  assert.equal(fin.status, 200, JSON.stringify(fin.body))
  assert.deepEqual(
    [fin.body.invoice_status, fin.body.invoice_number, fin.body.billing_sequence, fin.body.issue_date, fin.body.due_date, fin.body.total, fin.body.amount_due],
    ['FINALIZED', 'INV-000001', null, '2026-09-16T08:00:00.000Z', '2026-10-15T00:00:00.000Z', '120.00', '120.00'],
  )
  assert.deepEqual([...(await eventNames(p, inv.id))].sort(), ['invoice.drafted', 'invoice.finalized'])
  // Paid like any invoice.
  const paid = await t.api.post(`/v1/invoices/${inv.id}/payments`, { amount: '120.00' })
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  assert.equal(paid.body.invoice.payment_status, 'SUCCEEDED')
})

test('a CREDIT invoice stores negated amounts, collects nothing and refuses payments', async () => {
  clock.set(NOW)
  const { t, customer } = await setup()
  const res = await t.api.post('/v1/invoices', {
    customer_id: customer.id, invoice_type: 'CREDIT', currency: 'EUR',
    line_items: [{ display_name: 'Goodwill credit', amount: '10.5' }, { display_name: 'SLA credit', amount: '0.25' }],
  })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const inv = res.body
  assert.deepEqual(
    [inv.invoice_type, inv.invoice_status, inv.payment_status, inv.subtotal, inv.total, inv.amount_due, inv.amount_remaining],
    ['CREDIT', 'DRAFT', 'SUCCEEDED', '-10.75', '-10.75', '0.00', '0.00'],
  )
  assert.deepEqual(inv.line_items.map((l: any) => l.amount), ['-10.50', '-0.25'])
  const fin = await t.api.post(`/v1/invoices/${inv.id}/finalize`, {})
  assert.equal(fin.status, 200, JSON.stringify(fin.body))
  assert.deepEqual([fin.body.invoice_status, fin.body.total, fin.body.amount_due], ['FINALIZED', '-10.75', '0.00'])
  const declared = await t.api.post('/v1/invoices', {
    customer_id: customer.id, invoice_type: 'CREDIT', currency: 'EUR', subtotal: '-1.5', total: '-1.50', amount_due: '0', line_items: [{ display_name: 'c', amount: '1.5' }],
  })
  assert.equal(declared.status, 201, JSON.stringify(declared.body))
  assert.deepEqual([declared.body.subtotal, declared.body.total, declared.body.amount_due], ['-1.50', '-1.50', '0.00'])
  assertError(await t.api.post(`/v1/invoices/${inv.id}/payments`, { amount: '1.00' }), 400, 'invalid_operation')
  assert.equal(await countRows(p, 'invoice_payments', t.tenantId), 0)
})

test('refused creations write nothing', async () => {
  clock.set(NOW)
  const { t, customer } = await setup()
  const other = await setup()
  const line = { display_name: 'Fee', amount: '5' }
  const base = { customer_id: customer.id, invoice_type: 'ONE_OFF', currency: 'USD', line_items: [line] }
  assertError(await t.api.post('/v1/invoices', { ...base, customer_id: other.customer.id }), 400, 'validation_error', /customer_id/)
  assertError(await t.api.post('/v1/invoices', { ...base, line_items: [] }), 400, 'validation_error')
  assertError(await t.api.post('/v1/invoices', { ...base, line_items: [{ display_name: 'Fee', amount: '-5' }] }), 400, 'validation_error')
  assertError(await t.api.post('/v1/invoices', { ...base, line_items: [{ display_name: 'Fee', amount: 5 }] }), 400, 'validation_error')
  assertError(await t.api.post('/v1/invoices', { ...base, line_items: [{ display_name: 'Fee', amount: '5.001' }] }), 400, 'validation_error', /decimals/)
  assertError(await t.api.post('/v1/invoices', { ...base, line_items: [{ display_name: 'Fee', amount: '5', quantity: '0' }] }), 400, 'validation_error', /quantity/)
  assertError(await t.api.post('/v1/invoices', { ...base, line_items: [{ display_name: 'Fee', amount: '5', price_id: 'price_nope' }] }), 400, 'validation_error', /price_id/)
  assertError(await t.api.post('/v1/invoices', { ...base, invoice_type: 'SUBSCRIPTION' }), 400, 'validation_error')
  assertError(await t.api.post('/v1/invoices', { ...base, billing_reason: 'WALLET_AUTO_TOPUP' }), 400, 'validation_error')
  assertError(await t.api.post('/v1/invoices', { ...base, issue_date: '2026-10-02T00:00:00Z', due_date: '2026-10-01T00:00:00Z' }), 400, 'validation_error', /due_date/)
  // totals a client sends (Flexprice's SDK requires them) must be what the line items make
  assertError(await t.api.post('/v1/invoices', { ...base, subtotal: '5.01' }), 400, 'validation_error', /^subtotal: 5.01 does not match the line items, which make 5.00$/)
  assertError(await t.api.post('/v1/invoices', { ...base, total: '4' }), 400, 'validation_error', /^total: 4 does not match/)
  assertError(await t.api.post('/v1/invoices', { ...base, amount_due: '0' }), 400, 'validation_error', /^amount_due: 0 does not match/)
  assertError(await t.api.post('/v1/invoices', { ...base, subtotal: 'five' }), 400, 'validation_error', /subtotal/)
  assert.equal(await countRows(p, 'invoices', t.tenantId), 0)
  assert.equal(await countRows(p, 'invoice_line_items', t.tenantId), 0)
  assert.equal(await countRows(p, 'system_events_outbox', t.tenantId), 1) // customer.created only

  // A repeated idempotency_key is a 409 while its invoice is live.
  const first = await created(t.api.post('/v1/invoices', { ...base, idempotency_key: 'k1' }))
  assertError(await t.api.post('/v1/invoices', { ...base, idempotency_key: 'k1' }), 409, 'already_exists', new RegExp(first.id))
  assert.equal(await countRows(p, 'invoices', t.tenantId), 1)
  // Concurrent requests with one new key: exactly one is created.
  const racing = await Promise.all(Array.from({ length: 6 }, () => t.api.post('/v1/invoices', { ...base, idempotency_key: 'k2' })))
  assert.deepEqual(racing.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409])
  for (const r of racing.filter((x) => x.status === 409)) assertError(r, 409, 'already_exists')
  assert.equal(await countRows(p, 'invoices', t.tenantId), 2)
})

test('PUT /invoices/{id}: issue_date wins on the PDF, stale versions conflict, only DRAFT and FINALIZED change', async () => {
  clock.set(NOW)
  const { t, customer } = await setup()
  const inv = await created(t.api.post('/v1/invoices', {
    customer_id: customer.id, invoice_type: 'ONE_OFF', currency: 'USD', line_items: [{ display_name: 'Fee', amount: '42' }],
  }))
  const upd = await t.api.put(`/v1/invoices/${inv.id}`, { version: 1, issue_date: '2026-09-01T00:00:00Z', description: 'September work', metadata: { a: 'b' } })
  assert.equal(upd.status, 200, JSON.stringify(upd.body))
  assert.deepEqual(
    [upd.body.issue_date, upd.body.description, upd.body.metadata, upd.body.version, upd.body.invoice_status],
    ['2026-09-01T00:00:00.000Z', 'September work', { a: 'b' }, 2, 'DRAFT'],
  )
  // A stale version is refused and changes nothing.
  assertError(await t.api.put(`/v1/invoices/${inv.id}`, { version: 1, description: 'stale' }), 409, 'version_conflict')
  assert.equal((await t.api.get(`/v1/invoices/${inv.id}`)).body.description, 'September work')
  assertError(await t.api.put(`/v1/invoices/${inv.id}`, { version: 2 }), 400, 'validation_error', /nothing to update/)
  assertError(await t.api.put(`/v1/invoices/${inv.id}`, { due_date: '2026-08-01T00:00:00Z' }), 400, 'validation_error', /due_date/)

  clock.set(new Date('2026-09-20T00:00:00Z'))
  const fin = (await t.api.post(`/v1/invoices/${inv.id}/finalize`, {})).body
  assert.deepEqual([fin.finalized_at, fin.issue_date, fin.version], ['2026-09-20T00:00:00.000Z', '2026-09-01T00:00:00.000Z', 3])
  // FINALIZED: the issue date can still move; the PDF shows it, not finalized_at.
  const moved = await t.api.put(`/v1/invoices/${inv.id}`, { version: 3, issue_date: '2026-09-05T00:00:00Z', due_date: '2026-10-05T00:00:00Z' })
  assert.equal(moved.status, 200, JSON.stringify(moved.body))
  assert.deepEqual([moved.body.issue_date, moved.body.due_date, moved.body.version], ['2026-09-05T00:00:00.000Z', '2026-10-05T00:00:00.000Z', 4])
  const pdf = await fetch(`${p.url}/v1/invoices/${inv.id}/pdf`, { headers: { 'x-api-key': t.apiKey } })
  assert.equal(pdf.status, 200)
  const file = join(dir, `${inv.id}.pdf`)
  writeFileSync(file, Buffer.from(await pdf.arrayBuffer()))
  const text = execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' })
  assert.match(text, /Issue date\s+2026-09-05/)
  assert.match(text, /Due date\s+2026-10-05/)
  assert.doesNotMatch(text, /2026-09-20/)
  const names = await eventNames(p, inv.id)
  assert.equal(names.filter((n) => n === 'invoice.updated').length, 2)

  // VOIDED: refused.
  assert.equal((await t.api.post(`/v1/invoices/${inv.id}/void`, {})).status, 200)
  assertError(await t.api.put(`/v1/invoices/${inv.id}`, { description: 'late' }), 400, 'invalid_operation', /VOIDED/)
  // Another tenant's invoice is not found.
  const other = await setup()
  assertError(await other.t.api.put(`/v1/invoices/${inv.id}`, { description: 'x' }), 404, 'not_found')
  const [row] = await sql(p, 'SELECT description FROM invoices WHERE id = ?', [inv.id])
  assert.equal(row.description, 'September work')
})
