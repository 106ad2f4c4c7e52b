// Refunds through HTTP: amounts, payment status, credit notes, events, the refundable limit,
// idempotent retries under concurrency, refusals and tenancy. Figures worked out by hand.
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import type { Producer } from 'kafkajs'
import { ManualClock } from '../../platform/clock.js'
import { createKafka, createProducer } from '../../platform/kafka.js'
import { assertError } from '../../test/support/assertions.js'
import { created } from '../../test/support/fixtures.js'
import { usePlatform } from '../../test/support/platform.js'
import { relaySystemEvents } from '../outbox/relay.js'
import { billedInvoices, eventNames, sql, type Tenant } from '../../test/support/invoices.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
const p = usePlatform({ services: ['billing-api'], clock })
let producer: Producer | undefined
after(async () => {
  await producer?.disconnect()
})

/** A FINALIZED invoice of 25.00 in a fresh tenant, paid `paid` (none when omitted). */
async function paidInvoice(...payments: string[]): Promise<{ t: Tenant; id: string; paymentIds: string[] }> {
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  assert.equal((await t.api.post(`/v1/invoices/${id}/finalize`, {})).status, 200)
  const paymentIds: string[] = []
  for (const amount of payments) {
    const res = await t.api.post(`/v1/invoices/${id}/payments`, { amount })
    assert.equal(res.status, 201, JSON.stringify(res.body))
    paymentIds.push(res.body.id)
  }
  return { t, id, paymentIds }
}

const amounts = (inv: any) => [inv.amount_paid, inv.amount_remaining, inv.overpaid_amount, inv.refunded_amount, inv.payment_status]

test('partial then full refund: amounts, statuses, a finalized CREDIT invoice per refund, events', async () => {
  const { t, id } = await paidInvoice('25.00')
  const first = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '10.00', reason: 'service outage', idempotency_key: 'r1' })
  assert.equal(first.status, 201, JSON.stringify(first.body))
  // 25.00 paid - 10.00 = 15.00; nothing remaining: the credit note credits the 10.00
  assert.deepEqual(amounts(first.body.invoice), ['15.00', '0.00', '0.00', '10.00', 'PARTIALLY_REFUNDED'])
  const r1 = first.body.refund
  assert.match(r1.id, /^refund_/)
  assert.deepEqual([r1.amount, r1.excess_amount, r1.credited_amount, r1.currency, r1.reason, r1.refunded_at], ['10.00', '0.00', '10.00', 'USD', 'service outage', NOW.toISOString()])
  const note = first.body.credit_note
  assert.equal(r1.credit_note_id, note.id)
  assert.deepEqual([note.invoice_type, note.invoice_status, note.total, note.amount_due, note.payment_status], ['CREDIT', 'FINALIZED', '-10.00', '0.00', 'SUCCEEDED'])
  assert.match(note.invoice_number, /^INV-\d{6}$/)
  assert.deepEqual(note.metadata, { credited_invoice_id: id, refund_id: r1.id })
  assert.deepEqual(note.line_items.map((l: any) => [l.display_name, l.amount]), [[`Refund of ${first.body.invoice.invoice_number}`, '-10.00']])

  const second = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '15' })
  assert.equal(second.status, 201, JSON.stringify(second.body))
  assert.deepEqual(amounts(second.body.invoice), ['0.00', '0.00', '0.00', '25.00', 'REFUNDED'])
  assert.equal(second.body.credit_note.total, '-15.00')
  // Nothing is left to refund: REFUNDED is terminal.
  assertError(await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '0.01' }), 400, 'validation_error', /more than what is left to refund \(0\.00\)/)
  assertError(await t.api.post(`/v1/invoices/${id}/payments`, { amount: '1' }), 400, 'invalid_operation', /REFUNDED/)

  const history = (await t.api.get(`/v1/invoices/${id}/payments`)).body
  assert.deepEqual(history.payments.map((x: any) => x.amount), ['25.00'])
  assert.deepEqual(history.refunds.map((x: any) => [x.amount, x.credited_amount]), [['10.00', '10.00'], ['15.00', '15.00']])
  const events = await eventNames(p, id)
  assert.equal(events.filter((e) => e === 'invoice.refunded').length, 2)
  // one for the payment, one per refund
  assert.equal(events.filter((e) => e === 'invoice.payment_status_updated').length, 3)
  const [payload] = await sql(p, `SELECT payload FROM system_events_outbox WHERE entity_id = ? AND event_name = 'invoice.refunded' ORDER BY created_at, id LIMIT 1`, [id])
  assert.equal(payload.payload.refund.id, r1.id)
  assert.equal(payload.payload.previous_payment_status, 'SUCCEEDED')
  assert.equal(payload.payload.payment_status, 'PARTIALLY_REFUNDED')
  const notes = await sql(p, `SELECT total::text AS total FROM invoices WHERE invoice_type = 'CREDIT' AND metadata->>'credited_invoice_id' = ? ORDER BY created_at`, [id])
  assert.deepEqual(notes.map((n) => n.total), ['-10.00', '-15.00'])
})

test('an overpayment is returned first without a credit note; then the invoice is credited', async () => {
  // 25.00 due, 30.50 paid: 5.50 over
  const { t, id } = await paidInvoice('30.50')
  const a = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '2.50' })
  assert.equal(a.status, 201, JSON.stringify(a.body))
  assert.deepEqual(amounts(a.body.invoice), ['28.00', '0.00', '3.00', '2.50', 'OVERPAID'])
  assert.equal(a.body.credit_note, null)
  const b = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '4.00' })
  // 3.00 of excess + 1.00 credited
  assert.deepEqual(amounts(b.body.invoice), ['24.00', '0.00', '0.00', '6.50', 'PARTIALLY_REFUNDED'])
  assert.deepEqual([b.body.refund.excess_amount, b.body.refund.credited_amount, b.body.credit_note.total], ['3.00', '1.00', '-1.00'])
})

test('a refund naming a payment is limited to that payment', async () => {
  const { t, id, paymentIds: [p1, p2] } = await paidInvoice('10.00', '15.00')
  assertError(await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '10.01', payment_id: p1 }), 400, 'validation_error', /payment .* \(10\.00\)/)
  assert.equal((await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '6', payment_id: p1 })).status, 201)
  assertError(await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '4.01', payment_id: p1 }), 400, 'validation_error', /\(4\.00\)/)
  assertError(await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '1', payment_id: 'pay_missing' }), 400, 'validation_error', /payment_id/)
  const ok = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '15', payment_id: p2 })
  assert.deepEqual(amounts(ok.body.invoice), ['4.00', '0.00', '0.00', '21.00', 'PARTIALLY_REFUNDED'])
})

test('concurrent retries of one idempotency key refund once; a different amount under it is 409', async () => {
  const { t, id } = await paidInvoice('25.00')
  const results = await Promise.all(Array.from({ length: 5 }, () => t.api.post(`/v1/invoices/${id}/refunds`, { amount: '5.00', idempotency_key: 'same' })))
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 200, 200, 200, 201], JSON.stringify(results.map((r) => r.body)))
  const ids = new Set(results.map((r) => r.body.refund.id))
  assert.equal(ids.size, 1)
  const notes = new Set(results.map((r) => r.body.credit_note.id))
  assert.equal(notes.size, 1)
  assert.ok(results.every((r) => r.body.replayed === (r.status === 200)))
  assert.deepEqual(amounts((await t.api.get(`/v1/invoices/${id}`)).body), ['20.00', '0.00', '0.00', '5.00', 'PARTIALLY_REFUNDED'])
  assertError(await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '6.00', idempotency_key: 'same' }), 409, 'already_exists', /same/)
  const [{ n }] = await sql(p, `SELECT count(*)::int AS n FROM invoice_refunds WHERE invoice_id = ?`, [id])
  assert.equal(n, 1)
  const [{ c }] = await sql(p, `SELECT count(*)::int AS c FROM invoices WHERE invoice_type = 'CREDIT' AND metadata->>'credited_invoice_id' = ?`, [id])
  assert.equal(c, 1)
})

test('refusals leave nothing behind: drafts, unpaid invoices, bad input, stale versions, other tenants', async () => {
  const t = await p.newTenant()
  const { invoiceIds: [draft] } = await billedInvoices(p, t)
  assertError(await t.api.post(`/v1/invoices/${draft}/refunds`, { amount: '1' }), 400, 'invalid_operation', /DRAFT/)
  // finalized, nothing paid: nothing to refund
  const { t: t2, id } = await paidInvoice()
  assertError(await t2.api.post(`/v1/invoices/${id}/refunds`, { amount: '5' }), 400, 'validation_error', /more than what is left to refund \(0\.00\)/)
  for (const body of [{ amount: '0' }, { amount: '-1' }, { amount: '1.001' }, { amount: 1 }, {}, { amount: '1', extra: true }]) {
    assertError(await t2.api.post(`/v1/invoices/${id}/refunds`, body), 400, 'validation_error')
  }
  const { t: t3, id: paid } = await paidInvoice('25.00')
  const before = (await t3.api.get(`/v1/invoices/${paid}`)).body
  assertError(await t3.api.post(`/v1/invoices/${paid}/refunds`, { amount: '1', version: before.version - 1 }), 409, 'version_conflict')
  // Tenancy: another tenant's key sees nothing of this invoice's payments and changes nothing.
  assertError(await t.api.post(`/v1/invoices/${paid}/refunds`, { amount: '1' }), 404, 'not_found')
  assertError(await t.api.get(`/v1/invoices/${paid}/payments`), 404, 'not_found')
  assertError(await t.api.post(`/v1/invoices/${paid}/payment_failures`, {}), 404, 'not_found')
  const after = (await t3.api.get(`/v1/invoices/${paid}`)).body
  assert.deepEqual(amounts(after), amounts(before))
  assert.equal(after.version, before.version)
  const [{ n }] = await sql(p, `SELECT count(*)::int AS n FROM invoice_refunds WHERE invoice_id IN (?, ?, ?)`, [draft, id, paid])
  assert.equal(n, 0)
  const [{ c }] = await sql(p, `SELECT count(*)::int AS c FROM invoices WHERE tenant_id IN (?, ?, ?) AND invoice_type = 'CREDIT'`, [t.tenantId, t2.tenantId, t3.tenantId])
  assert.equal(c, 0)
})

test('30.00 paid of 50.00: refund 10.00, more than paid is 400, the rest of the paid part, pay the rest, refund it all', async () => {
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t, { amount: '50' })
  assert.equal((await t.api.post(`/v1/invoices/${id}/finalize`, {})).status, 200)
  const inv = async () => (await t.api.get(`/v1/invoices/${id}`)).body
  assert.equal((await t.api.post(`/v1/invoices/${id}/payments`, { amount: '30.00' })).status, 201)
  assert.deepEqual(amounts(await inv()), ['30.00', '20.00', '0.00', '0.00', 'PENDING'])

  // 30.00 - 10.00 = 20.00 still paid; 20.00 still owed (10.00 credited by the note); still PENDING
  const a = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '10.00' })
  assert.equal(a.status, 201, JSON.stringify(a.body))
  assert.deepEqual(amounts(a.body.invoice), ['20.00', '20.00', '0.00', '10.00', 'PENDING'])
  assert.deepEqual([a.body.refund.credited_amount, a.body.credit_note.total], ['10.00', '-10.00'])

  const before = await inv()
  assertError(await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '20.01' }), 400, 'validation_error', /20\.01 is more than what is left to refund \(20\.00\)/)
  assert.deepEqual(amounts(await inv()), amounts(before))
  assert.equal((await inv()).version, before.version)

  // the whole paid part: 0.00 paid, 30.00 refunded, 20.00 still owed
  const b = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '20' })
  assert.equal(b.status, 201, JSON.stringify(b.body))
  assert.deepEqual(amounts(b.body.invoice), ['0.00', '20.00', '0.00', '30.00', 'PENDING'])

  // paying the 20.00 left settles it: 20.00 paid + 30.00 credited = 50.00
  assert.equal((await t.api.post(`/v1/invoices/${id}/payments`, { amount: '20.00' })).status, 201)
  const settled = await inv()
  assert.deepEqual(amounts(settled), ['20.00', '0.00', '0.00', '30.00', 'PARTIALLY_REFUNDED'])
  assert.ok(settled.paid_at)
  assertError(await t.api.post(`/v1/invoices/${id}/payments`, { amount: '0.01' }), 400, 'invalid_operation', /PARTIALLY_REFUNDED/)

  const c = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '20.00' })
  assert.equal(c.status, 201, JSON.stringify(c.body))
  assert.deepEqual(amounts(c.body.invoice), ['0.00', '0.00', '0.00', '50.00', 'REFUNDED'])

  const history = (await t.api.get(`/v1/invoices/${id}/payments`)).body
  assert.deepEqual(history.payments.map((x: any) => x.amount), ['30.00', '20.00'])
  assert.deepEqual(history.refunds.map((x: any) => x.amount), ['10.00', '20.00', '20.00'])
  const notes = await sql(p, `SELECT total::text AS total FROM invoices WHERE invoice_type = 'CREDIT' AND metadata->>'credited_invoice_id' = ? ORDER BY created_at`, [id])
  assert.deepEqual(notes.map((n) => n.total), ['-10.00', '-20.00', '-20.00'])
  const statuses = await sql(p, `SELECT payload->>'previous_payment_status' AS f, payload->>'payment_status' AS s FROM system_events_outbox WHERE entity_id = ? AND event_name = 'invoice.refunded' ORDER BY created_at, id`, [id])
  assert.deepEqual(statuses.map((r) => `${r.f}->${r.s}`), ['PENDING->PENDING', 'PENDING->PENDING', 'PARTIALLY_REFUNDED->REFUNDED'])
})

test('a partly paid invoice whose collection failed stays FAILED when what was paid is refunded', async () => {
  const { t, id } = await paidInvoice('15.00')
  assert.equal((await t.api.post(`/v1/invoices/${id}/payment_failures`, { failure_code: 'card_declined' })).status, 201)
  const r = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '15.00' })
  assert.equal(r.status, 201, JSON.stringify(r.body))
  // 25.00 due: 15.00 paid and refunded (credited), 10.00 still owed
  assert.deepEqual(amounts(r.body.invoice), ['0.00', '10.00', '0.00', '15.00', 'FAILED'])
  assert.equal((await t.api.post(`/v1/invoices/${id}/payments`, { amount: '10.00' })).status, 201)
  assert.deepEqual(amounts((await t.api.get(`/v1/invoices/${id}`)).body), ['10.00', '0.00', '0.00', '15.00', 'PARTIALLY_REFUNDED'])
})

test('refund events reach a subscribed webhook endpoint through the outbox relay', async () => {
  const { t, id } = await paidInvoice('25.00')
  const ep = await created(t.api.post('/v1/webhooks/endpoints', { url: 'http://127.0.0.1:9/hooks', event_types: ['invoice.refunded', 'invoice.payment_failed'] }))
  const res = await t.api.post(`/v1/invoices/${id}/refunds`, { amount: '7.50' })
  assert.equal(res.status, 201)
  producer = await createProducer(createKafka(p.config, 'refunds-test'))
  await relaySystemEvents(p.ctx.orm, producer, p.config.systemEventsTopic, { tenantId: t.tenantId, onDeliveries: async () => undefined })
  const rows = await sql(p, `SELECT event_name, payload FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at, id`, [ep.id])
  assert.deepEqual(rows.map((r) => r.event_name), ['invoice.refunded'])
  assert.equal(rows[0].payload.payload.refund.id, res.body.refund.id)
  assert.equal(rows[0].payload.payload.refund.amount, '7.50')
  assert.equal(rows[0].payload.payload.refunded_amount, '7.50')
})
