// SKIPPED invoices by id and by explicit filter, `expand`, generic `filters`, amount bounds as
// numbers or decimal strings, and invoice_pdf_url pointing at the PDF route.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { assertError } from '../../test/support/assertions.js'
import { usePlatform } from '../../test/support/platform.js'
import { billedInvoices } from '../../test/support/invoices.js'

const clock = new ManualClock(new Date('2026-09-15T10:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

test('SKIPPED invoices: readable by id, listed only when a filter names SKIPPED; other tenants see nothing', async () => {
  const t = await p.newTenant()
  const [skipped] = (await billedInvoices(p, t, { amount: '0' })).invoiceIds
  const [draft] = (await billedInvoices(p, t)).invoiceIds
  const one = await t.api.get(`/v1/invoices/${skipped}`)
  assert.equal(one.status, 200, JSON.stringify(one.body))
  assert.deepEqual([one.body.invoice_status, one.body.total, one.body.invoice_number], ['SKIPPED', '0.00', null])
  const search = async (body: object) => {
    const res = await t.api.post('/v1/invoices/search', body)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body.items.map((i: any) => i.id)
  }
  assert.deepEqual(await search({}), [draft])
  assert.deepEqual(await search({ invoice_status: ['SKIPPED'] }), [skipped])
  assert.deepEqual((await search({ invoice_status: ['SKIPPED', 'DRAFT'] })).sort(), [draft, skipped].sort())
  assert.deepEqual(await search({ filters: [{ field: 'invoice_status', value: { string: 'SKIPPED' } }] }), [skipped])
  assert.deepEqual(await search({ filters: [{ field: 'invoice_status', value: { array: ['SKIPPED'] } }] }), [skipped])
  // A SKIPPED id listed in invoice_ids alone is still left out: only a status filter asks for them.
  assert.deepEqual(await search({ invoice_ids: [skipped] }), [])
  const stranger = await p.newTenant()
  assertError(await stranger.api.get(`/v1/invoices/${skipped}`), 404, 'not_found')
  assert.deepEqual((await stranger.api.post('/v1/invoices/search', { invoice_status: ['SKIPPED'] })).body.items, [])
})

test('generic filters, numeric amount bounds and expand', async () => {
  const t = await p.newTenant()
  // 25.00 USD draft, 100.00 EUR finalized with 40.00 paid (60.00 remaining)
  const a = await billedInvoices(p, t)
  const b = await billedInvoices(p, t, { amount: '100', currency: 'EUR' })
  const [a1] = a.invoiceIds
  const [b1] = b.invoiceIds
  assert.equal((await t.api.post(`/v1/invoices/${b1}/finalize`, {})).status, 200)
  assert.equal((await t.api.post(`/v1/invoices/${b1}/payments`, { amount: '40' })).status, 201)
  await t.api.put(`/v1/invoices/${a1}`, { metadata: { region: 'eu-west' } })
  const ids = async (body: object) => {
    const res = await t.api.post('/v1/invoices/search', { skip_line_items: true, ...body })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return (res.body.items as { id: string }[]).map((i) => i.id).sort()
  }
  const both = [a1, b1].sort()
  // numbers and decimal strings bound the same way
  assert.deepEqual(await ids({ amount_due_gt: 25 }), [b1])
  assert.deepEqual(await ids({ amount_due_gt: 24.99 }), both)
  assert.deepEqual(await ids({ amount_due_gt: '24.99' }), both)
  assert.deepEqual(await ids({ amount_remaining_gt: 59.99 }), [b1])
  assert.deepEqual(await ids({ amount_remaining_gt: 60 }), [])

  const f = (field: string, value: object, operator?: string) => ({ filters: [{ field, value, ...(operator ? { operator } : {}) }] })
  assert.deepEqual(await ids(f('currency', { string: 'EUR' })), [b1])
  assert.deepEqual(await ids(f('currency', { string: 'EUR' }, 'ne')), [a1])
  assert.deepEqual(await ids(f('payment_status', { array: ['PENDING', 'FAILED'] })), both)
  assert.deepEqual(await ids(f('invoice_status', { array: [] })), [])
  assert.deepEqual(await ids(f('amount_paid', { number: 40 }, 'gte')), [b1])
  assert.deepEqual(await ids(f('amount_paid', { number: '40.01' }, 'gte')), [])
  assert.deepEqual(await ids(f('total', { number: '25.00' }, 'lte')), [a1])
  assert.deepEqual(await ids(f('finalized_at', { date: '2026-01-01T00:00:00Z' }, 'gt')), [b1])
  assert.deepEqual(await ids(f('metadata.region', { string: 'eu-west' })), [a1])
  assert.deepEqual(await ids(f('metadata.region', { string: 'eu-west' }, 'ne')), [b1])
  assert.deepEqual(await ids({ filters: [{ field: 'currency', value: { array: ['USD', 'EUR'] } }, { field: 'total', operator: 'gt', value: { number: 50 } }] }), [b1])

  for (const bad of [
    f('secret_column', { string: 'x' }), f('total', { string: '5' }), f('total', { array: ['5'] }), f('currency', { number: 1 }),
    f('currency', { string: 'USD' }, 'gt'), f('finalized_at', { string: 'soon' }, 'gt'), f('total', { number: 'lots' }),
    { filters: [{ field: 'total', value: { number: 1, string: '1' } }] }, { filters: [{ field: 'total', value: {} }] },
    { filters: [{ field: 'total', operator: 'like', value: { number: 1 } }] }, { expand: 'customer,wallet' },
  ]) assertError(await t.api.post('/v1/invoices/search', bad), 400, 'validation_error')

  const res = await t.api.post('/v1/invoices/search', { expand: 'customer, subscription', invoice_ids: [a1], skip_line_items: true })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const [inv] = res.body.items
  assert.equal(inv.customer.id, a.customer.id)
  assert.equal(inv.customer.external_id, a.customer.external_id)
  assert.equal(inv.subscription.id, a.sub.id)
  assert.equal(inv.subscription.plan_id, a.sub.plan_id)
  const plain = (await t.api.post('/v1/invoices/search', { invoice_ids: [a1] })).body.items[0]
  assert.deepEqual([plain.customer, plain.subscription], [null, null], 'not expanded')
})

test('invoice_pdf_url points at the PDF document route', async () => {
  const t = await p.newTenant()
  const [id] = (await billedInvoices(p, t)).invoiceIds
  const inv = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.equal(inv.invoice_pdf_url, `/v1/invoices/${id}/pdf`)
  const pdf = await fetch(p.url + inv.invoice_pdf_url, { headers: { 'x-api-key': t.apiKey } })
  assert.equal(pdf.status, 200)
  assert.equal(pdf.headers.get('content-type'), 'application/pdf')
  assert.equal(Buffer.from(await pdf.arrayBuffer()).subarray(0, 5).toString('latin1'), '%PDF-')
  assert.equal((await t.api.post('/v1/invoices/search', { invoice_ids: [id] })).body.items[0].invoice_pdf_url, `/v1/invoices/${id}/pdf`)
})
