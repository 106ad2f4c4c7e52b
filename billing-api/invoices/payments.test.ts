// Payments through HTTP: amounts, payment status, events, refusals, idempotency under
// concurrent duplicates, and the void rule for paid invoices.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { assertError } from '../../test/support/assertions.js'
import { usePlatform } from '../../test/support/platform.js'
import { billedInvoices, eventNames, sql, type Tenant } from '../../test/support/invoices.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
const p = usePlatform({ services: ['billing-api', 'scheduler'], clock })

/** A FINALIZED invoice of 25.00 (or `amount`) in a fresh tenant. */
async function finalizedInvoice(opts: { amount?: string; currency?: string } = {}): Promise<{ t: Tenant; id: string }> {
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t, opts)
  const res = await t.api.post(`/v1/invoices/${id}/finalize`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  return { t, id }
}

const amounts = (inv: any) => [inv.amount_paid, inv.amount_remaining, inv.overpaid_amount, inv.payment_status]

async function paymentRows(id: string) {
  return sql(p, 'SELECT amount::text AS amount, reference, idempotency_key FROM invoice_payments WHERE invoice_id = ? ORDER BY created_at, id', [id])
}

test('a partial payment stays PENDING; paying the rest makes it SUCCEEDED with paid_at', async () => {
  clock.set(NOW)
  const { t, id } = await finalizedInvoice()
  const first = await t.api.post(`/v1/invoices/${id}/payments`, { amount: '10.00', reference: 'wire-1', idempotency_key: 'k1' })
  assert.equal(first.status, 201, JSON.stringify(first.body))
  assert.equal(first.body.amount, '10.00')
  assert.equal(first.body.currency, 'USD')
  assert.equal(first.body.reference, 'wire-1')
  assert.equal(first.body.paid_at, NOW.toISOString())
  assert.equal(first.body.invoice_id, id)
  assert.match(first.body.id, /^pay_/)
  // 25.00 - 10 = 15.00
  assert.deepEqual(amounts(first.body.invoice), ['10.00', '15.00', '0.00', 'PENDING'])
  assert.equal(first.body.invoice.paid_at, null)
  assert.equal(first.body.invoice.version, 3)

  const second = await t.api.post(`/v1/invoices/${id}/payments`, { amount: '15.00', paid_at: '2026-09-14T08:30:00Z', idempotency_key: 'k2' })
  assert.equal(second.status, 201, JSON.stringify(second.body))
  assert.deepEqual(amounts(second.body.invoice), ['25.00', '0.00', '0.00', 'SUCCEEDED'])
  assert.equal(second.body.invoice.paid_at, '2026-09-14T08:30:00.000Z')
  const inv = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.deepEqual(amounts(inv), ['25.00', '0.00', '0.00', 'SUCCEEDED'])
  assert.equal(inv.total, '25.00')
  assert.deepEqual(await paymentRows(id), [
    { amount: '10.00', reference: 'wire-1', idempotency_key: 'k1' },
    { amount: '15.00', reference: null, idempotency_key: 'k2' },
  ])
  const events = (await eventNames(p, id)).filter((e) => e === 'invoice.payment_status_updated')
  assert.equal(events.length, 2)

  // Paid: no further payment, no void; nothing changes.
  assertError(await t.api.post(`/v1/invoices/${id}/payments`, { amount: '1' }), 400, 'invalid_operation', /SUCCEEDED/)
  assertError(await t.api.post(`/v1/invoices/${id}/void`, {}), 400, 'invalid_operation', /paid/)
  const still = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.deepEqual(amounts(still), ['25.00', '0.00', '0.00', 'SUCCEEDED'])
  assert.equal(still.invoice_status, 'FINALIZED')
  assert.equal(still.version, inv.version)
  assert.equal((await paymentRows(id)).length, 2)
})

test('paying more than the total makes it OVERPAID; an overpaid invoice cannot be voided', async () => {
  clock.set(NOW)
  const { t, id } = await finalizedInvoice()
  const res = await t.api.post(`/v1/invoices/${id}/payments`, { amount: '30.5' })
  assert.equal(res.status, 201, JSON.stringify(res.body))
  // 30.50 - 25.00 = 5.50 over
  assert.deepEqual(amounts(res.body.invoice), ['30.50', '0.00', '5.50', 'OVERPAID'])
  assert.equal(res.body.invoice.paid_at, NOW.toISOString())
  assertError(await t.api.post(`/v1/invoices/${id}/void`, {}), 400, 'invalid_operation', /paid/)
  assertError(await t.api.post(`/v1/invoices/${id}/payments`, { amount: '1' }), 400, 'invalid_operation', /OVERPAID/)
  assert.deepEqual(amounts((await t.api.get(`/v1/invoices/${id}`)).body), ['30.50', '0.00', '5.50', 'OVERPAID'])
  assert.equal((await paymentRows(id)).length, 1)
})

test('a partially paid invoice can still be voided', async () => {
  clock.set(NOW)
  const { t, id } = await finalizedInvoice()
  await t.api.post(`/v1/invoices/${id}/payments`, { amount: '5' })
  const res = await t.api.post(`/v1/invoices/${id}/void`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.invoice_status, 'VOIDED')
  assert.deepEqual(amounts(res.body), ['5.00', '20.00', '0.00', 'PENDING'])
  // A voided invoice takes no payment.
  assertError(await t.api.post(`/v1/invoices/${id}/payments`, { amount: '20' }), 400, 'invalid_operation', /VOIDED/)
  assert.equal((await paymentRows(id)).length, 1)
})

test('concurrent duplicates of one idempotency key apply once; the rest are 409 already_exists', async () => {
  clock.set(NOW)
  const { t, id } = await finalizedInvoice()
  const results = await Promise.all(
    Array.from({ length: 6 }, () => t.api.post(`/v1/invoices/${id}/payments`, { amount: '7.25', idempotency_key: 'same-key' })),
  )
  const ok = results.filter((r) => r.status === 201)
  assert.equal(ok.length, 1, JSON.stringify(results.map((r) => r.status)))
  for (const r of results.filter((x) => x.status !== 201)) assertError(r, 409, 'already_exists', /same-key/)
  // 25.00 - 7.25 = 17.75
  assert.deepEqual(amounts((await t.api.get(`/v1/invoices/${id}`)).body), ['7.25', '17.75', '0.00', 'PENDING'])
  assert.deepEqual(await paymentRows(id), [{ amount: '7.25', reference: null, idempotency_key: 'same-key' }])
  assert.equal((await eventNames(p, id)).filter((e) => e === 'invoice.payment_status_updated').length, 1)
  // The key is per invoice: another invoice of the tenant may use it.
  const { invoiceIds: [other] } = await billedInvoices(p, t)
  await t.api.post(`/v1/invoices/${other}/finalize`, {})
  assert.equal((await t.api.post(`/v1/invoices/${other}/payments`, { amount: '1', idempotency_key: 'same-key' })).status, 201)
  // And a sequential retry is refused the same way.
  assertError(await t.api.post(`/v1/invoices/${id}/payments`, { amount: '7.25', idempotency_key: 'same-key' }), 409, 'already_exists')
  assert.equal((await paymentRows(id)).length, 1)
})

test('refusals: draft invoices, bad amounts, stale versions, other tenants; nothing changes', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const { invoiceIds: [draft] } = await billedInvoices(p, t)
  assertError(await t.api.post(`/v1/invoices/${draft}/payments`, { amount: '1' }), 400, 'invalid_operation', /DRAFT/)

  const { t: t2, id } = await finalizedInvoice()
  const before = (await t2.api.get(`/v1/invoices/${id}`)).body
  const bad: [unknown, RegExp | undefined][] = [
    [{ amount: '0' }, /greater than 0/],
    [{ amount: '0.00' }, /greater than 0/],
    [{ amount: '-5' }, /greater than 0/],
    [{ amount: '1.001' }, /decimals/],
    [{ amount: 10 }, undefined],
    [{ amount: '1e3' }, undefined],
    [{}, /amount/],
    [{ amount: '1', paid_at: 'yesterday' }, undefined],
    [{ amount: '1', surprise: true }, undefined],
  ]
  for (const [body] of bad) assertError(await t2.api.post(`/v1/invoices/${id}/payments`, body), 400, 'validation_error')
  for (const [body, message] of bad) if (message) assertError(await t2.api.post(`/v1/invoices/${id}/payments`, body), 400, 'validation_error', message)
  assertError(await t2.api.post(`/v1/invoices/${id}/payments`, { amount: '1', version: 1 }), 409, 'version_conflict')
  assertError(await t.api.post(`/v1/invoices/${id}/payments`, { amount: '1' }), 404, 'not_found')
  assertError(await t2.api.post('/v1/invoices/inv_missing/payments', { amount: '1' }), 404, 'not_found')
  const after = (await t2.api.get(`/v1/invoices/${id}`)).body
  assert.deepEqual(amounts(after), amounts(before))
  assert.equal(after.amount_remaining, '25.00')
  assert.equal(after.payment_status, 'PENDING')
  assert.equal(after.version, before.version)
  assert.equal((await paymentRows(id)).length, 0)
  assert.equal((await paymentRows(draft)).length, 0)

  // The current version is accepted.
  const ok = await t2.api.post(`/v1/invoices/${id}/payments`, { amount: '1', version: before.version })
  assert.equal(ok.status, 201, JSON.stringify(ok.body))
  assert.equal(ok.body.invoice.version, before.version + 1)
})
