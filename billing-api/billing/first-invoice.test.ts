// The first period's advance charges: invoiced when the subscription starts paid billing
// (SUBSCRIPTION_CREATE), prorated for a calendar stub period, finalized no earlier than the
// period's start, and absent when the plan has no advance charge.
import {  test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform, sqlOn } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { finalizeDueInvoices } from '../invoices/finalize-due.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const sql = sqlOn(p)
const iso = (d: string | Date) => new Date(d).toISOString()
const eur = { currency: 'EUR', billing_period: 'MONTHLY', type: 'FIXED', billing_model: 'FLAT_FEE' }

async function subscribe(prices: object[], body: object = {}) {
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices }))
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'acme', plan_id: plan.id, currency: 'EUR', ...body }))
  const invoices = await sql(
    `SELECT id, billing_reason, invoice_status, total::text, period_start, period_end FROM invoices WHERE subscription_id = ? ORDER BY created_at, id`,
    [sub.id],
  )
  return { t, sub, invoices }
}

test('created active: the first period advance fee and a one-time setup fee are invoiced at once; arrear fees wait', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { invoices } = await subscribe([
    { ...eur, amount: '6', invoice_cadence: 'ADVANCE', display_name: 'Fee' },
    { ...eur, billing_period: 'ONETIME', amount: '50', invoice_cadence: 'ADVANCE', display_name: 'Setup' },
    { ...eur, amount: '30', invoice_cadence: 'ARREAR', display_name: 'Seat' },
  ], { start_date: '2026-10-01T00:00:00Z' })
  assert.equal(invoices.length, 1)
  const [inv] = invoices
  // 6.00 + 50.00 = 56.00, for [10-01, 11-01)
  assert.deepEqual([inv.billing_reason, inv.invoice_status, inv.total], ['SUBSCRIPTION_CREATE', 'DRAFT', '56.00'])
  assert.deepEqual([iso(inv.period_start), iso(inv.period_end)], ['2026-10-01T00:00:00.000Z', '2026-11-01T00:00:00.000Z'])
  const lines = await sql(`SELECT display_name, amount::text FROM invoice_line_items WHERE invoice_id = ? ORDER BY display_name`, [inv.id])
  assert.deepEqual(lines.map((l: any) => [l.display_name, l.amount]), [['Fee', '6.00'], ['Setup', '50.00']])
})

test('a plan with arrear charges only gets no invoice at creation', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { invoices } = await subscribe([{ ...eur, amount: '30', invoice_cadence: 'ARREAR', display_name: 'Seat' }], { start_date: '2026-10-01T00:00:00Z' })
  assert.deepEqual(invoices, [])
})

test('calendar cycle started mid-month: the stub period fee is prorated second-exactly', async () => {
  clock.set(new Date('2026-10-15T00:00:00Z'))
  const { invoices } = await subscribe([{ ...eur, amount: '31', invoice_cadence: 'ADVANCE', display_name: 'Fee' }],
    { start_date: '2026-10-15T00:00:00Z', billing_cycle: 'calendar' })
  // [10-15, 11-01) is 17 of October's 31 days: 31.00 x 17/31 = 17.00
  assert.deepEqual(invoices.map((i: any) => [i.billing_reason, i.total, iso(i.period_start), iso(i.period_end)]),
    [['SUBSCRIPTION_CREATE', '17.00', '2026-10-15T00:00:00.000Z', '2026-11-01T00:00:00.000Z']])
})

test('a future start: the first invoice is drafted now but not finalized before its period starts', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, invoices } = await subscribe([{ ...eur, amount: '6', invoice_cadence: 'ADVANCE', display_name: 'Fee' }], { start_date: '2026-12-01T00:00:00Z' })
  assert.deepEqual(invoices.map((i: any) => [i.billing_reason, i.invoice_status, i.total]), [['SUBSCRIPTION_CREATE', 'DRAFT', '6.00']])
  clock.set(new Date('2026-10-01T03:00:00Z')) // past the 2-hour finalization delay
  assert.equal(await finalizeDueInvoices(p.ctx, { tenantId: t.tenantId }), 0)
  clock.set(new Date('2026-12-01T00:00:00Z'))
  assert.equal(await finalizeDueInvoices(p.ctx, { tenantId: t.tenantId }), 1)
  const [after] = await sql(`SELECT invoice_status, invoice_number FROM invoices WHERE id = ?`, [invoices[0].id])
  assert.equal(after.invoice_status, 'FINALIZED')
  assert.match(after.invoice_number, /^INV-\d{6}$/)
})

test('a draft subscription is invoiced on activation, not on creation', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const { t, sub, invoices } = await subscribe([{ ...eur, amount: '6', invoice_cadence: 'ADVANCE', display_name: 'Fee' }], { draft: true })
  assert.deepEqual(invoices, [])
  clock.set(new Date('2026-10-03T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/activate`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const rows = await sql(`SELECT billing_reason, total::text, period_start FROM invoices WHERE subscription_id = ?`, [sub.id])
  assert.deepEqual(rows.map((i: any) => [i.billing_reason, i.total, iso(i.period_start)]), [['SUBSCRIPTION_CREATE', '6.00', '2026-10-03T00:00:00.000Z']])
})
