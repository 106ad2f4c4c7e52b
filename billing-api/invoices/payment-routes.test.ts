// Flexprice's /payments resource over the payments recorded against invoices: a create records
// the payment on its invoice, reads and the metadata update are of those records, a recorded
// payment is neither processed again nor deleted, and another tenant sees none of it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { assertError } from '../../test/support/assertions.js'
import { usePlatform } from '../../test/support/platform.js'
import { billedInvoices, sql } from '../../test/support/invoices.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const p = usePlatform({ services: ['billing-api', 'scheduler'], clock: new ManualClock(NOW) })

/** A FINALIZED invoice of 25.00 USD in a fresh tenant. */
async function finalizedInvoice() {
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  assert.equal((await t.api.post(`/v1/invoices/${id}/finalize`, {})).status, 200)
  return { t, id: id! }
}

const payment = (invoiceId: string, over: object = {}) => ({
  amount: '10.00', currency: 'USD', destination_id: invoiceId, destination_type: 'INVOICE', payment_method_type: 'OFFLINE', ...over,
})
const rows = async (invoiceId: string) => (await sql(p, 'SELECT count(*)::int AS n FROM invoice_payments WHERE invoice_id = ?', [invoiceId]))[0].n

test('a payment created on an invoice is recorded there: 10.00 of 25.00 paid; read, listed by invoice and its metadata changed', async () => {
  const { t, id } = await finalizedInvoice()
  const res = await t.api.post('/v1/payments', payment(id, { idempotency_key: 'wire-1', metadata: { ref: 'wire' }, process_payment: true }))
  assert.equal(res.status, 201, JSON.stringify(res.body))
  const pay = res.body
  assert.deepEqual(
    [pay.amount, pay.currency, pay.destination_id, pay.destination_type, pay.payment_method_type, pay.payment_status, pay.succeeded_at, pay.metadata, pay.payment_gateway],
    ['10.00', 'USD', id, 'INVOICE', 'OFFLINE', 'SUCCEEDED', NOW.toISOString(), { ref: 'wire' }, null],
  )
  assert.match(pay.invoice_number, /./)
  const invoice = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.deepEqual([invoice.amount_paid, invoice.amount_remaining, invoice.payment_status], ['10.00', '15.00', 'PENDING'])

  assert.deepEqual((await t.api.get(`/v1/payments/${pay.id}`)).body, pay)
  const listed = (await t.api.get(`/v1/payments?destination_id=${id}`)).body
  assert.deepEqual([listed.items.map((x: any) => x.id), listed.pagination.total], [[pay.id], 1])
  const updated = await t.api.put(`/v1/payments/${pay.id}`, { metadata: { ref: 'wire-2' } })
  assert.deepEqual([updated.status, updated.body.metadata, updated.body.amount], [200, { ref: 'wire-2' }, '10.00'])
})

test('refused, writing nothing: another currency, a card payment, a deferred one; processing or deleting a recorded payment', async () => {
  const { t, id } = await finalizedInvoice()
  assertError(await t.api.post('/v1/payments', payment(id, { currency: 'EUR' })), 400, 'validation_error', /currency must be the invoice's \(USD\)/)
  assertError(await t.api.post('/v1/payments', payment(id, { payment_method_type: 'CARD' })), 400, 'validation_error', /payment_method_type/)
  assertError(await t.api.post('/v1/payments', payment(id, { process_payment: false })), 400, 'validation_error', /process_payment/)
  assertError(await t.api.post('/v1/payments', payment(id, { amount: '0' })), 400, 'validation_error', /amount/)
  assert.equal(await rows(id), 0)
  const pay = (await t.api.post('/v1/payments', payment(id))).body
  assertError(await t.api.post(`/v1/payments/${pay.id}/process`, undefined), 400, 'invalid_operation', /applied when it is recorded/)
  assertError(await t.api.delete(`/v1/payments/${pay.id}`), 400, 'invalid_operation', /not deleted/)
  assert.equal(await rows(id), 1)
})

test('another tenant\'s key cannot pay, read, list or change a tenant\'s invoice payments', async () => {
  const { t, id } = await finalizedInvoice()
  const pay = (await t.api.post('/v1/payments', payment(id))).body
  const other = await p.newTenant()
  assertError(await other.api.post('/v1/payments', payment(id)), 404, 'not_found')
  assertError(await other.api.get(`/v1/payments/${pay.id}`), 404, 'not_found')
  assertError(await other.api.put(`/v1/payments/${pay.id}`, { metadata: { x: 'y' } }), 404, 'not_found')
  assert.deepEqual((await other.api.get(`/v1/payments?destination_id=${id}`)).body.items, [])
  assert.equal(await rows(id), 1)
  assert.deepEqual((await t.api.get(`/v1/payments/${pay.id}`)).body.metadata, {})
})

test('PUT /invoices/{id}/payment SUCCEEDED records a payment of what is left (15.00 after 10.00); another status, another amount or another tenant are refused', async () => {
  const { t, id } = await finalizedInvoice()
  await t.api.post('/v1/payments', payment(id))
  const other = await p.newTenant()
  assertError(await other.api.put(`/v1/invoices/${id}/payment`, { payment_status: 'SUCCEEDED' }), 404, 'not_found')
  assertError(await t.api.put(`/v1/invoices/${id}/payment`, { payment_status: 'FAILED' }), 400, 'validation_error', /only SUCCEEDED/)
  assertError(await t.api.put(`/v1/invoices/${id}/payment`, { payment_status: 'SUCCEEDED', amount: '25.00' }), 400, 'validation_error', /amount must be what is left to pay \(15.00 USD\)/)
  assert.equal(await rows(id), 1)
  const res = await t.api.put(`/v1/invoices/${id}/payment`, { payment_status: 'SUCCEEDED', amount: '15.00' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual([res.body.amount_paid, res.body.amount_remaining, res.body.payment_status, res.body.paid_at], ['25.00', '0.00', 'SUCCEEDED', NOW.toISOString()])
  assert.equal(await rows(id), 2)
  assertError(await t.api.put(`/v1/invoices/${id}/payment`, { payment_status: 'SUCCEEDED' }), 400, 'invalid_operation', /nothing left to pay/)
})

test('GET /customers/{id}/invoices/summary adds up the FINALIZED invoices per currency: 25.00 billed, 15.00 unpaid after 10.00; another tenant gets 404', async () => {
  const { t, id } = await finalizedInvoice()
  await t.api.post('/v1/payments', payment(id))
  const invoice = (await t.api.get(`/v1/invoices/${id}`)).body
  const res = await t.api.get(`/v1/customers/${invoice.customer_id}/invoices/summary`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body, {
    customer_id: invoice.customer_id, default_currency: 'USD',
    summaries: [{
      customer_id: invoice.customer_id, currency: 'USD', total_invoice_count: 1, total_revenue_amount: '25.00', total_unpaid_amount: '15.00',
      unpaid_invoice_count: 1, total_overdue_amount: invoice.due_date && invoice.due_date < NOW.toISOString() ? '15.00' : '0.00',
      overdue_invoice_count: invoice.due_date && invoice.due_date < NOW.toISOString() ? 1 : 0, unpaid_fixed_charges: null, unpaid_usage_charges: null,
    }],
  })
  const other = await p.newTenant()
  assertError(await other.api.get(`/v1/customers/${invoice.customer_id}/invoices/summary`), 404, 'not_found')
})
