// Credit notes through HTTP on a ONE_OFF invoice of 29.99 (Seats 25.00, Setup 4.99), figures
// worked out by hand: drafts reserve, finalization credits the invoice exactly, a settled
// invoice takes no more notes, only drafts are voided, bad input and other tenants are refused.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created } from '../../test/support/fixtures.js'
import { type ApiClient, usePlatform } from '../../test/support/platform.js'
import { assertError, countRows } from '../../test/support/assertions.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
const p = usePlatform({ services: ['billing-api'], clock })

/** A FINALIZED ONE_OFF invoice of 29.99 and its lines by name. */
async function finalizedInvoice(api: ApiClient) {
  const customer = await created(api.post('/v1/customers', { external_id: `c-${Math.random()}` }))
  const draft = await created(api.post('/v1/invoices', {
    customer_id: customer.id, invoice_type: 'ONE_OFF', currency: 'USD',
    line_items: [{ display_name: 'Seats', amount: '25.00', quantity: '2' }, { display_name: 'Setup', amount: '4.99' }],
  }))
  const invoice = (await api.post(`/v1/invoices/${draft.id}/finalize`, {})).body
  const line = Object.fromEntries(draft.line_items.map((l: any) => [l.display_name, l.id])) as Record<'Seats' | 'Setup', string>
  return { id: draft.id as string, number: invoice.invoice_number as string, line }
}

const owed = async (api: ApiClient, id: string) => {
  const inv = (await api.get(`/v1/invoices/${id}`)).body
  return [inv.adjustment_amount, inv.amount_due, inv.amount_paid, inv.amount_remaining, inv.payment_status]
}

test('drafts reserve, finalizing credits the invoice exactly, a note that settles it makes it SUCCEEDED', async () => {
  const { api, tenantId, environments, userId } = await p.newTenant()
  const inv = await finalizedInvoice(api)
  await created(api.post(`/v1/invoices/${inv.id}/payments`, { amount: '10.00' }))

  const a = await created(api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'BILLING_ERROR', memo: 'setup waived', line_items: [{ invoice_line_item_id: inv.line.Setup, amount: '4.99' }] }))
  assert.match(a.id, /^cn_/)
  assert.deepEqual([a.tenant_id, a.environment_id, a.created_by, a.status], [tenantId, environments.production, userId, 'published'])
  assert.deepEqual([a.credit_note_number, a.credit_note_status, a.credit_note_type, a.reason, a.memo, a.currency, a.total_amount, a.finalized_at, a.voided_at],
    [`CN-${inv.number}-1`, 'DRAFT', 'ADJUSTMENT', 'BILLING_ERROR', 'setup waived', 'USD', '4.99', null, null])
  assert.deepEqual(a.line_items.map((l: any) => [l.invoice_line_item_id, l.display_name, l.amount, l.credit_note_id]), [[inv.line.Setup, 'Setup', '4.99', a.id]])
  assert.deepEqual((await api.get(`/v1/creditnotes/${a.id}`)).body, a)
  // a draft changes nothing on the invoice: 29.99 due, 10.00 paid, 19.99 left
  assert.deepEqual(await owed(api, inv.id), ['0.00', '29.99', '10.00', '19.99', 'PENDING'])

  // 19.99 left less the 4.99 the draft reserves: 15.00 can still be credited; Seats alone holds 25.00
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: inv.line.Seats, amount: '15.01' }] }), 400, 'validation_error', /15\.01 is more than what is left to credit on the invoice \(15\.00/)
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: inv.line.Setup, amount: '0.01' }] }), 400, 'validation_error', /left to credit on line .* \(0\.00\)/)

  clock.set(new Date(NOW.getTime() + 60_000))
  const fa = await api.post(`/v1/creditnotes/${a.id}/finalize`, {})
  assert.equal(fa.status, 200, JSON.stringify(fa.body))
  assert.deepEqual([fa.body.credit_note_status, fa.body.finalized_at], ['FINALIZED', '2026-09-15T10:01:00.000Z'])
  // 29.99 - 4.99 = 25.00 due, 10.00 paid, 15.00 left
  assert.deepEqual(await owed(api, inv.id), ['4.99', '25.00', '10.00', '15.00', 'PENDING'])
  assertError(await api.post(`/v1/creditnotes/${a.id}/finalize`, {}), 400, 'invalid_operation', /FINALIZED; only a DRAFT credit note can be finalized/)
  assertError(await api.post(`/v1/creditnotes/${a.id}/void`, {}), 400, 'invalid_operation', /only a DRAFT credit note can be voided/)

  // created and finalized at once: the 15.00 left is credited, nothing is owed any more
  const b = await created(api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'SERVICE_ISSUE', process_credit_note: true, line_items: [{ invoice_line_item_id: inv.line.Seats, amount: '15' }] }))
  assert.deepEqual([b.credit_note_number, b.credit_note_status, b.total_amount], [`CN-${inv.number}-2`, 'FINALIZED', '15.00'])
  assert.deepEqual(await owed(api, inv.id), ['19.99', '10.00', '10.00', '0.00', 'SUCCEEDED'])
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: inv.line.Seats, amount: '1' }] }), 400, 'invalid_operation', /settled .*\/refunds/)

  const events = await p.ctx.orm.em.fork().getConnection().execute(`SELECT event_name FROM system_events_outbox WHERE entity_id IN (?, ?, ?) ORDER BY created_at, id`, [a.id, b.id, inv.id])
  const names = events.map((e: any) => e.event_name)
  assert.equal(names.filter((n: string) => n === 'credit_note.finalized').length, 2)
  assert.ok(names.includes('invoice.payment_status_updated'))
})

test('void: a draft is cancelled, the invoice is untouched and what it reserved is free again', async () => {
  const { api } = await p.newTenant()
  const inv = await finalizedInvoice(api)
  const draft = await created(api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'ORDER_CHANGE', line_items: [{ invoice_line_item_id: inv.line.Seats, amount: '25.00' }, { invoice_line_item_id: inv.line.Setup, amount: '4.99' }] }))
  assert.equal(draft.total_amount, '29.99')
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: inv.line.Setup, amount: '0.01' }] }), 400, 'validation_error')
  const voided = await api.post(`/v1/creditnotes/${draft.id}/void`, {})
  assert.equal(voided.status, 200, JSON.stringify(voided.body))
  assert.deepEqual([voided.body.credit_note_status, voided.body.voided_at, voided.body.finalized_at], ['VOIDED', clock.now().toISOString(), null])
  assert.deepEqual(await owed(api, inv.id), ['0.00', '29.99', '0.00', '29.99', 'PENDING'])
  assertError(await api.post(`/v1/creditnotes/${draft.id}/void`, {}), 400, 'invalid_operation', /VOIDED/)
  const again = await created(api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: inv.line.Seats, amount: '25.00' }] }))
  assert.equal(again.credit_note_number, `CN-${inv.number}-2`)
})

test('bad input is a 400 ErrorResponse and writes nothing', async () => {
  const { api, tenantId } = await p.newTenant()
  const inv = await finalizedInvoice(api)
  const line = [{ invoice_line_item_id: inv.line.Setup, amount: '1.00' }]
  await created(api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', idempotency_key: 'cn-1', line_items: line }))
  const before = await countRows(p, 'credit_notes', tenantId)
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE' }), 400, 'validation_error', /line_items/)
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [] }), 400, 'validation_error')
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'BECAUSE', line_items: line }), 400, 'validation_error')
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: inv.line.Setup, amount: 1 }] }), 400, 'validation_error')
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: inv.line.Setup, amount: '0.001' }] }), 400, 'validation_error', /decimals/)
  assertError(await api.post('/v1/creditnotes', { invoice_id: 'inv_nobody', reason: 'DUPLICATE', line_items: line }), 400, 'validation_error', /invoice_id/)
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', idempotency_key: 'cn-1', line_items: line }), 409, 'already_exists')
  const customer = await created(api.post('/v1/customers', { external_id: 'drafty' }))
  const draftInvoice = await created(api.post('/v1/invoices', { customer_id: customer.id, invoice_type: 'ONE_OFF', currency: 'USD', line_items: [{ display_name: 'X', amount: '5.00' }] }))
  assertError(await api.post('/v1/creditnotes', { invoice_id: draftInvoice.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: draftInvoice.line_items[0].id, amount: '1.00' }] }), 400, 'invalid_operation', /DRAFT/)
  assertError(await api.get('/v1/creditnotes/cn_nobody'), 404, 'not_found')
  assert.equal(await countRows(p, 'credit_notes', tenantId), before)
  assert.equal(await countRows(p, 'credit_note_line_items', tenantId), before)
})

test('another tenant\'s key cannot read, finalize, void or credit', async () => {
  const owner = await p.newTenant()
  const inv = await finalizedInvoice(owner.api)
  const note = await created(owner.api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: inv.line.Seats, amount: '5.00' }] }))
  const { api } = await p.newTenant()
  assertError(await api.get(`/v1/creditnotes/${note.id}`), 404, 'not_found')
  assertError(await api.post(`/v1/creditnotes/${note.id}/finalize`, {}), 404, 'not_found')
  assertError(await api.post(`/v1/creditnotes/${note.id}/void`, {}), 404, 'not_found')
  assertError(await api.post('/v1/creditnotes', { invoice_id: inv.id, reason: 'DUPLICATE', line_items: [{ invoice_line_item_id: inv.line.Seats, amount: '5.00' }] }), 400, 'validation_error', /invoice_id/)
  assert.equal((await owner.api.get(`/v1/creditnotes/${note.id}`)).body.credit_note_status, 'DRAFT')
  assert.deepEqual(await owed(owner.api, inv.id), ['0.00', '29.99', '0.00', '29.99', 'PENDING'])
})
