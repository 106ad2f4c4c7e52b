// POST /v1/invoices/search: every filter, sorting, pagination, validation, tenancy, and
// SKIPPED invoices returned only when a status filter names them.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { assertError } from '../../test/support/assertions.js'
import { usePlatform } from '../../test/support/platform.js'
import { billedInvoices, sql } from '../../test/support/invoices.js'

const clock = new ManualClock(new Date('2026-09-15T10:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'scheduler'], clock })

test('search filters, sorts and pages invoices; SKIPPED only when asked for', async () => {
  const t = await p.newTenant()
  // A: 25 USD from July 1 -> July (A1) and August (A2) drafts.
  const a = await billedInvoices(p, t, { start: '2026-07-01T00:00:00Z' })
  const [a1, a2] = a.invoiceIds
  // B: 100 EUR from August 1 -> B1, finalized, 40 paid: 60.00 remaining.
  const b = await billedInvoices(p, t, { amount: '100', currency: 'EUR' })
  const [b1] = b.invoiceIds
  assert.equal((await t.api.post(`/v1/invoices/${b1}/finalize`, {})).status, 200)
  assert.equal((await t.api.post(`/v1/invoices/${b1}/payments`, { amount: '40' })).status, 201)
  // C: zero amount -> SKIPPED.
  const [skipped] = (await billedInvoices(p, t, { amount: '0' })).invoiceIds
  // Another tenant's invoice.
  const other = await p.newTenant()
  const [theirs] = (await billedInvoices(p, other)).invoiceIds

  const search = async (body: object) => {
    const res = await t.api.post('/v1/invoices/search', body)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }
  const ids = async (body: object) => ((await search(body)).items as { id: string }[]).map((i) => i.id)
  const set = async (body: object) => (await ids(body)).sort()
  const all = [a1, a2, b1].sort()

  const everything = await search({})
  assert.deepEqual(everything.items.map((i: any) => i.id).sort(), all)
  assert.deepEqual(everything.pagination, { limit: 50, offset: 0, total: 3 })
  for (const inv of everything.items) assert.equal(inv.line_items.length, 1)
  const b1Row = everything.items.find((i: any) => i.id === b1)
  assert.equal(b1Row.total, '100.00')
  assert.equal(b1Row.amount_remaining, '60.00')
  assert.equal(b1Row.line_items[0].amount, '100.00')
  assert.ok((await search({ skip_line_items: true })).items.every((i: any) => i.line_items === null))

  // Statuses: SKIPPED is left out unless asked for by name.
  assert.deepEqual(await ids({ invoice_status: ['SKIPPED'] }), [skipped])
  assert.deepEqual(await ids({ invoice_status: ['FINALIZED'] }), [b1])
  assert.deepEqual(await set({ invoice_status: ['DRAFT', 'FINALIZED', 'SKIPPED'] }), [...all, skipped].sort())
  assert.deepEqual(await set({ payment_status: ['PENDING'] }), all)
  assert.deepEqual(await ids({ payment_status: ['SUCCEEDED', 'OVERPAID'] }), [])
  assert.deepEqual(await ids({ invoice_ids: [a1, skipped, theirs] }), [a1])

  // Amounts compare as numbers: 100.00 > 9 although "100.00" < "9" as text.
  assert.deepEqual(await set({ amount_due_gt: '9' }), all)
  assert.deepEqual(await ids({ amount_due_gt: '25' }), [b1])
  assert.deepEqual(await set({ amount_due_gt: '24.99' }), all)
  assert.deepEqual(await ids({ amount_remaining_gt: '59.99' }), [b1])
  assert.deepEqual(await ids({ amount_remaining_gt: '60' }), [])

  // Exact matches and the joins.
  assert.deepEqual(await ids({ currency: 'eur' }), [b1])
  assert.deepEqual(await set({ currency: 'USD' }), [a1, a2].sort())
  assert.deepEqual(await set({ customer_id: a.customer.id }), [a1, a2].sort())
  assert.deepEqual(await ids({ external_customer_id: b.customer.external_id }), [b1])
  assert.deepEqual(await ids({ external_customer_id: 'nobody' }), [])
  assert.deepEqual(await set({ subscription_id: a.sub.id }), [a1, a2].sort())
  assert.deepEqual(await ids({ subscription_customer_id: [b.customer.id, 'cust_unknown'] }), [b1])
  assert.deepEqual(await ids({ subscription_customer_id: [] }), [], 'an empty list matches nothing (found by the API fuzzer: a 500 before)')
  assert.deepEqual(await set({ billing_reason: 'SUBSCRIPTION_CYCLE' }), all)
  assert.deepEqual(await ids({ billing_reason: 'MANUAL' }), [])
  assert.deepEqual(await set({ invoice_type: 'SUBSCRIPTION' }), all)
  assert.deepEqual(await ids({ invoice_type: 'ONE_OFF' }), [])

  // Period bounds are inclusive.
  assert.deepEqual(await set({ period_start_gte: '2026-08-01T00:00:00Z' }), [a2, b1].sort())
  assert.deepEqual(await ids({ period_start_lte: '2026-07-01T00:00:00Z' }), [a1])
  assert.deepEqual(await ids({ period_end_lte: '2026-08-01T00:00:00Z' }), [a1])
  assert.deepEqual(await set({ period_end_gte: '2026-09-01T00:00:00Z', period_end_lte: '2026-09-01T00:00:00Z' }), [a2, b1].sort())
  // start_time/end_time bound created_at.
  assert.deepEqual(await set({ start_time: '2000-01-01T00:00:00Z', end_time: '2100-01-01T00:00:00Z' }), all)
  assert.deepEqual(await ids({ start_time: '2100-01-01T00:00:00Z' }), [])
  assert.deepEqual(await ids({ end_time: '2000-01-01T00:00:00Z' }), [])

  // Sorting and paging: July first, then August by total descending.
  const sort = [{ field: 'period_start', direction: 'asc' }, { field: 'total', direction: 'desc' }]
  assert.deepEqual(await ids({ sort }), [a1, b1, a2])
  assert.deepEqual(await ids({ sort: [{ field: 'amount_due' }], order: 'asc' }).then((x) => x[2]), b1)
  assert.deepEqual(await ids({ sort: [{ field: 'amount_remaining', direction: 'desc' }] }).then((x) => x[0]), b1)
  const page1 = await search({ sort, limit: 2 })
  assert.deepEqual(page1.items.map((i: any) => i.id), [a1, b1])
  assert.deepEqual(page1.pagination, { limit: 2, offset: 0, total: 3 })
  const page2 = await search({ sort, limit: 2, offset: 2 })
  assert.deepEqual(page2.items.map((i: any) => i.id), [a2])
  assert.deepEqual(page2.pagination, { limit: 2, offset: 2, total: 3 })
  assert.deepEqual((await search({ offset: 10 })).items, [])

  // Record status: published by default; archived ones on request.
  await sql(p, `UPDATE invoices SET status = 'archived' WHERE id = ?`, [a1])
  assert.deepEqual(await set({}), [a2, b1].sort())
  assert.deepEqual(await ids({ status: 'archived' }), [a1])
  assert.deepEqual(await ids({ status: 'deleted' }), [])

  // The other tenant sees only its own.
  const theirsSearch = await other.api.post('/v1/invoices/search', {})
  assert.deepEqual(theirsSearch.body.items.map((i: any) => i.id), [theirs])
})

test('search refuses out-of-range pagination, unknown sort fields and malformed filters', async () => {
  const t = await p.newTenant()
  const bad: object[] = [
    { limit: 0 }, { limit: 1001 }, { offset: -1 }, { limit: 'ten' }, { limit: 1.5 },
    { sort: [{ field: 'customer_id' }] }, { sort: [{ field: 'total', direction: 'up' }] }, { order: 'random' },
    { amount_due_gt: -10 }, { amount_due_gt: '-1' }, { amount_remaining_gt: 'lots' },
    { invoice_status: ['PAID'] }, { invoice_status: 'DRAFT' }, { payment_status: ['UNPAID'] }, { billing_reason: 'GIFT' },
    { start_time: 'yesterday' }, { status: 'gone' }, { expand: 'payments' },
  ]
  for (const body of bad) assertError(await t.api.post('/v1/invoices/search', body), 400, 'validation_error')
  for (const body of [{ limit: 1 }, { limit: 1000 }, { offset: 0 }]) {
    const res = await t.api.post('/v1/invoices/search', body)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.deepEqual(res.body.items, [])
  }
})
