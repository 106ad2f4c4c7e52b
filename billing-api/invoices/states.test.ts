// Invoice states through HTTP and the scheduler: finalize (now and after the delay), void,
// invoice numbers, events in the outbox, optimistic locking, idempotency after a void.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { SubscriptionSchema } from '../subscriptions/subscription.entity.js'
import { assertError } from '../../test/support/assertions.js'
import { usePlatform } from '../../test/support/platform.js'
import { finalizeDueInvoices } from './finalize-due.js'
import { createSubscriptionInvoice } from '../billing/subscription-invoice.js'
import { billedInvoices, eventNames, sql } from '../../test/support/invoices.js'
import { withSecondProcess } from '../../test/support/second-process.js'

const NOW = new Date('2026-09-15T10:00:00Z')
const clock = new ManualClock(NOW)
const p = usePlatform({ services: ['billing-api', 'scheduler'], clock })

const sorted = (xs: string[]) => [...xs].sort()

test('finalize assigns the environment number, the subscription sequence and the dates, and publishes once', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  // Started July 1: July and August are billed, both 25.00 DRAFT invoices.
  const { invoiceIds: [july, august] } = await billedInvoices(p, t, { start: '2026-07-01T00:00:00Z' })
  const draft = (await t.api.get(`/v1/invoices/${july}`)).body
  assert.equal(draft.invoice_status, 'DRAFT')
  assert.equal(draft.invoice_number, null)
  assert.equal(draft.version, 1)
  assert.deepEqual(await eventNames(p, july), ['invoice.drafted'])

  const res = await t.api.post(`/v1/invoices/${august}/finalize`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const inv = res.body
  assert.equal(inv.invoice_status, 'FINALIZED')
  assert.equal(inv.invoice_number, 'INV-000001')
  assert.equal(inv.billing_sequence, 1)
  assert.equal(inv.finalized_at, NOW.toISOString())
  assert.equal(inv.issue_date, NOW.toISOString())
  assert.equal(inv.due_date, NOW.toISOString())
  assert.equal(inv.version, 2)
  assert.equal(inv.payment_status, 'PENDING')
  // Nothing is recomputed: the draft's amounts are final.
  assert.equal(inv.total, '25.00')
  assert.equal(inv.amount_due, '25.00')
  assert.equal(inv.amount_remaining, '25.00')
  assert.equal(inv.line_items.length, 1)
  assert.deepEqual(sorted(await eventNames(p, august)), ['invoice.drafted', 'invoice.finalized'])

  clock.set(new Date(NOW.getTime() + 60_000))
  const second = (await t.api.post(`/v1/invoices/${july}/finalize`, {})).body
  assert.equal(second.invoice_number, 'INV-000002')
  assert.equal(second.billing_sequence, 2)
  assert.equal(second.finalized_at, '2026-09-15T10:01:00.000Z')

  // Another subscription of the same environment continues the number, restarts the sequence.
  const other = await billedInvoices(p, t)
  const third = (await t.api.post(`/v1/invoices/${other.invoiceIds[0]}/finalize`, {})).body
  assert.equal(third.invoice_number, 'INV-000003')
  assert.equal(third.billing_sequence, 1)
  // Another tenant starts at 1.
  const t2 = await p.newTenant()
  const theirs = await billedInvoices(p, t2)
  assert.equal((await t2.api.post(`/v1/invoices/${theirs.invoiceIds[0]}/finalize`, {})).body.invoice_number, 'INV-000001')

  // Finalizing again is refused and changes nothing.
  const again = await t.api.post(`/v1/invoices/${august}/finalize`, {})
  assertError(again, 400, 'invalid_operation', /FINALIZED/)
  const after = (await t.api.get(`/v1/invoices/${august}`)).body
  assert.equal(after.invoice_number, 'INV-000001')
  assert.equal(after.version, 2)
  assert.equal(after.finalized_at, NOW.toISOString())
  assert.deepEqual(sorted(await eventNames(p, august)), ['invoice.drafted', 'invoice.finalized'])
  const [seq] = await sql(p, 'SELECT next_value::int AS n FROM invoice_sequences WHERE tenant_id = ?', [t.tenantId])
  assert.equal(seq.n, 4)
})

test('a supplied issue_date is kept and due_date follows it', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  await sql(p, `UPDATE invoices SET issue_date = '2026-09-10T00:00:00Z' WHERE id = ?`, [id])
  // A bare POST (no body) finalizes too.
  const res = await t.api.request('POST', `/v1/invoices/${id}/finalize`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const inv = res.body
  assert.equal(inv.issue_date, '2026-09-10T00:00:00.000Z')
  assert.equal(inv.due_date, '2026-09-10T00:00:00.000Z')
  assert.equal(inv.finalized_at, NOW.toISOString())
})

test('a SKIPPED invoice is never finalized, gets no number and no drafted event', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t, { amount: '0' })
  const [row] = await sql(p, 'SELECT invoice_status FROM invoices WHERE id = ?', [id])
  assert.equal(row.invoice_status, 'SKIPPED')
  assert.deepEqual(await eventNames(p, id), [])
  const res = await t.api.post(`/v1/invoices/${id}/finalize`, {})
  assertError(res, 400, 'invalid_operation', /SKIPPED/)
  clock.set(new Date(NOW.getTime() + 24 * 3600_000))
  assert.equal(await p.scheduler!.trigger('invoice-finalization', { tenant_id: t.tenantId }), 0)
  const [afterRow] = await sql(p, 'SELECT invoice_status, invoice_number, version FROM invoices WHERE id = ?', [id])
  assert.deepEqual(afterRow, { invoice_status: 'SKIPPED', invoice_number: null, version: 1 })
  assert.deepEqual(await eventNames(p, id), [])
  assert.equal((await sql(p, 'SELECT count(*)::int AS n FROM invoice_sequences WHERE tenant_id = ?', [t.tenantId]))[0].n, 0)
})

test('the finalization job finalizes drafts once the delay (120 minutes) has passed, once', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  assert.equal(p.config.finalizationDelayMinutes, 120)
  clock.set(new Date(NOW.getTime() + 119 * 60_000))
  assert.equal(await p.scheduler!.trigger('invoice-finalization', { tenant_id: t.tenantId }), 0)
  assert.equal((await t.api.get(`/v1/invoices/${id}`)).body.invoice_status, 'DRAFT')
  clock.set(new Date(NOW.getTime() + 120 * 60_000))
  assert.equal(await p.scheduler!.trigger('invoice-finalization', { tenant_id: t.tenantId }), 1)
  assert.equal(await p.scheduler!.trigger('invoice-finalization', { tenant_id: t.tenantId }), 0)
  const inv = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.equal(inv.invoice_status, 'FINALIZED')
  assert.equal(inv.invoice_number, 'INV-000001')
  assert.equal(inv.finalized_at, '2026-09-15T12:00:00.000Z')
  assert.deepEqual(sorted(await eventNames(p, id)), ['invoice.drafted', 'invoice.finalized'])
})

test('two concurrent finalization runs finalize each draft once with distinct numbers', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const ids: string[] = []
  for (let i = 0; i < 7; i++) ids.push(...(await billedInvoices(p, t)).invoiceIds)
  clock.set(new Date(NOW.getTime() + 3 * 3600_000))
  await withSecondProcess(p, async (ctxB) => {
    const only = { tenantId: t.tenantId, batchSize: 2 }
    const [a, b] = await Promise.all([finalizeDueInvoices(p.ctx, only), finalizeDueInvoices(ctxB, only)])
    assert.equal(a + b, 7, `runs finalized ${a} + ${b}`)
  })
  const rows = await sql(p, 'SELECT invoice_number FROM invoices WHERE id IN (?) ORDER BY invoice_number', [ids])
  assert.deepEqual(rows.map((r) => r.invoice_number), [1, 2, 3, 4, 5, 6, 7].map((n) => `INV-00000${n}`))
  const events = await sql(p, `SELECT count(*)::int AS n FROM system_events_outbox WHERE entity_id IN (?) AND event_name = 'invoice.finalized'`, [ids])
  assert.equal(events[0].n, 7)
})

test('two concurrent computes of the same period, over two connection pools, write one invoice and one drafted event', async () => {
  clock.set(new Date('2026-08-20T00:00:00Z')) // the August period has not ended: nothing is billed yet
  const t = await p.newTenant()
  const plan = (await t.api.post('/v1/plans', {
    name: 'Fee', prices: [{ type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '25', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }],
  })).body
  const customer = (await t.api.post('/v1/customers', { external_id: 'race' })).body
  const created = (await t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: '2026-08-01T00:00:00Z' })).body
  const period = [new Date('2026-08-01T00:00:00Z'), new Date('2026-09-01T00:00:00Z')] as const
  await withSecondProcess(p, async (ctxB) => {
    const results = await Promise.all([p.ctx, ctxB, p.ctx, ctxB].map(async (ctx) => {
      const em = ctx.orm.em.fork()
      const sub = await em.findOneOrFail(SubscriptionSchema, { id: created.id })
      return (await createSubscriptionInvoice(ctx, em, sub, ...period, 'SUBSCRIPTION_CYCLE')).id
    }))
    assert.equal(new Set(results).size, 1, `one invoice id for every caller: ${results.join(', ')}`)
  })
  const rows = await sql(p, `SELECT id, total::text FROM invoices WHERE subscription_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE'`, [created.id])
  assert.deepEqual(rows.map((r) => r.total), ['25.00'])
  assert.deepEqual(await eventNames(p, rows[0].id), ['invoice.drafted'])
})

test('void: FINALIZED and unpaid -> VOIDED; other states refused; the key can then be billed again', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const { sub, invoiceIds: [id] } = await billedInvoices(p, t)
  // A DRAFT cannot be voided.
  assertError(await t.api.post(`/v1/invoices/${id}/void`, {}), 400, 'invalid_operation', /DRAFT/)
  assert.equal((await t.api.get(`/v1/invoices/${id}`)).body.invoice_status, 'DRAFT')

  await t.api.post(`/v1/invoices/${id}/finalize`, {})
  // While the invoice is live, re-creating the same period returns it (idempotency key).
  const em = p.ctx.orm.em.fork()
  const subscription = await em.findOneOrFail(SubscriptionSchema, { id: sub.id, tenant_id: t.tenantId })
  const period: [Date, Date] = [new Date('2026-08-01T00:00:00Z'), new Date('2026-09-01T00:00:00Z')]
  assert.equal((await createSubscriptionInvoice(p.ctx, em, subscription, ...period, 'SUBSCRIPTION_CYCLE')).id, id)

  clock.set(new Date(NOW.getTime() + 5 * 60_000))
  const res = await t.api.post(`/v1/invoices/${id}/void`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.equal(res.body.invoice_status, 'VOIDED')
  assert.equal(res.body.voided_at, '2026-09-15T10:05:00.000Z')
  assert.equal(res.body.invoice_number, 'INV-000001')
  assert.equal(res.body.version, 3)
  assert.deepEqual(sorted(await eventNames(p, id)), ['invoice.drafted', 'invoice.finalized', 'invoice.voided'])

  // Voided twice, or finalized after a void: refused, nothing changes.
  assertError(await t.api.post(`/v1/invoices/${id}/void`, {}), 400, 'invalid_operation', /VOIDED/)
  assertError(await t.api.post(`/v1/invoices/${id}/finalize`, {}), 400, 'invalid_operation', /VOIDED/)
  const still = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.equal(still.version, 3)
  assert.equal(still.voided_at, '2026-09-15T10:05:00.000Z')

  // The voided invoice no longer holds its idempotency key: the same period bills anew.
  const fresh = await createSubscriptionInvoice(p.ctx, p.ctx.orm.em.fork(), subscription, ...period, 'SUBSCRIPTION_CYCLE')
  assert.notEqual(fresh.id, id)
  assert.equal(fresh.invoice_status, 'DRAFT')
  assert.equal(fresh.idempotency_key, still.idempotency_key)
  assert.equal(fresh.total, '25.00')
  assert.deepEqual(await eventNames(p, fresh.id), ['invoice.drafted'])
  // ...and the replay of the new one returns it without a second drafted event.
  assert.equal((await createSubscriptionInvoice(p.ctx, p.ctx.orm.em.fork(), subscription, ...period, 'SUBSCRIPTION_CYCLE')).id, fresh.id)
  assert.deepEqual(await eventNames(p, fresh.id), ['invoice.drafted'])
})

test('a stale version is a 409 version_conflict and changes nothing', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  assertError(await t.api.post(`/v1/invoices/${id}/finalize`, { version: 2 }), 409, 'version_conflict')
  const draft = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.equal(draft.invoice_status, 'DRAFT')
  assert.equal(draft.version, 1)
  assert.deepEqual(await eventNames(p, id), ['invoice.drafted'])

  const fin = await t.api.post(`/v1/invoices/${id}/finalize`, { version: 1 })
  assert.equal(fin.status, 200, JSON.stringify(fin.body))
  assert.equal(fin.body.version, 2)
  assertError(await t.api.post(`/v1/invoices/${id}/void`, { version: 1 }), 409, 'version_conflict')
  assert.equal((await t.api.get(`/v1/invoices/${id}`)).body.invoice_status, 'FINALIZED')
  assert.equal((await t.api.post(`/v1/invoices/${id}/void`, { version: 2 })).body.invoice_status, 'VOIDED')
})

test('unknown ids, other tenants and bad bodies are refused', async () => {
  clock.set(NOW)
  const t = await p.newTenant()
  const other = await p.newTenant()
  const { invoiceIds: [id] } = await billedInvoices(p, t)
  assertError(await t.api.post('/v1/invoices/inv_missing/finalize', {}), 404, 'not_found')
  // No body at all is the same as {} (no version check).
  assertError(await t.api.request('POST', '/v1/invoices/inv_missing/void'), 404, 'not_found')
  assertError(await other.api.post(`/v1/invoices/${id}/finalize`, {}), 404, 'not_found')
  assertError(await other.api.post(`/v1/invoices/${id}/void`, {}), 404, 'not_found')
  assertError(await t.api.post(`/v1/invoices/${id}/finalize`, { version: 'one' }), 400, 'validation_error')
  assertError(await t.api.post(`/v1/invoices/${id}/finalize`, { force: true }), 400, 'validation_error')
  const inv = (await t.api.get(`/v1/invoices/${id}`)).body
  assert.equal(inv.invoice_status, 'DRAFT')
  assert.equal(inv.version, 1)
})
