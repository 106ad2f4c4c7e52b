// What a termination gives back: coupons on a cancellation's PRORATION invoice and credits of
// what was actually charged (after coupons), credits of advance charges on another cadence up
// to their own period end, and a CREDIT invoice for a paid first invoice of a subscription
// ended at its start (final-invoice.ts, terminate.ts).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, usePlatform, sqlOn } from '../../test/support/platform.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { billDueSubscriptions } from '../billing/bill-due.js'
import { terminateSubscription } from './terminate.js'
import { SubscriptionSchema } from './subscription.entity.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

const sql = sqlOn(p)
const eur = { currency: 'EUR', billing_period: 'MONTHLY', type: 'FIXED', billing_model: 'FLAT_FEE' }

async function invoicesOf(subscriptionId: string) {
  const invoices = await sql(
    `SELECT id, billing_reason, to_char(period_start AT TIME ZONE 'UTC', 'MM-DD') AS start, to_char(period_end AT TIME ZONE 'UTC', 'MM-DD') AS end,
            subtotal::text, total_discount::text, total::text, amount_due::text FROM invoices WHERE subscription_id = ? ORDER BY period_start, created_at`, [subscriptionId])
  for (const inv of invoices) {
    inv.lines = (await sql(
      `SELECT display_name, quantity::text, amount::text, line_item_discount::text, invoice_level_discount::text,
              to_char(period_start AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS start, to_char(period_end AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS end
         FROM invoice_line_items WHERE invoice_id = ? ORDER BY invoice_line_items.amount DESC, display_name`, [inv.id]))
      .map((l: any) => [l.display_name, l.quantity, l.amount, l.line_item_discount, l.invoice_level_discount, l.start, l.end])
    inv.coupons = (await sql(
      `SELECT c.name, a.discounted_amount::text, a.original_price::text, a.final_price::text, (a.invoice_line_item_id IS NOT NULL) AS line_level
         FROM coupon_applications a JOIN coupons c ON c.id = a.coupon_id WHERE a.invoice_id = ? ORDER BY c.name`, [inv.id]))
      .map((a: any) => [a.name, a.discounted_amount, a.original_price, a.final_price, a.line_level])
    delete inv.id
  }
  return invoices
}

test('cancellation: coupons discount the final invoice like a cycle invoice; the unused fee credit is of the discounted amount', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro',
    prices: [
      { ...eur, amount: '6', invoice_cadence: 'ADVANCE', display_name: 'Fee' },
      { ...eur, amount: '30', invoice_cadence: 'ARREAR', display_name: 'Seat' },
      { ...eur, type: 'USAGE', amount: '0.5', meter_id: meter.id, invoice_cadence: 'ARREAR', display_name: 'Calls' },
    ],
  }))
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'acme', plan_id: plan.id, currency: 'EUR', start_date: '2026-10-01T00:00:00Z' }))
  const fee = sub.line_items.find((l: any) => l.display_name === 'Fee')
  const attach = async (name: string, body: object, to: object = {}) => {
    const c = await created(t.api.post('/v1/coupons', { name, duration: 'forever', ...body }))
    await created(t.api.post('/v1/coupon_associations', { coupon_id: c.id, subscription_id: sub.id, ...to }))
  }
  // Attached after the create invoice was drafted: that one (October's fee) stays undiscounted.
  await attach('A half fee', { type: 'percentage', percentage_off: '50' }, { subscription_line_item_id: fee.id })
  await attach('B ten percent', { type: 'percentage', percentage_off: '10' })
  const call = (i: number, ts: string) => ({ event_id: `e${i}`, event_name: 'call', external_customer_id: 'acme', timestamp: ts, properties: {} })
  await ingestAll(t.api, [
    ...[1, 2, 3].map((i) => call(i, '2026-10-05T00:00:00Z')), // October: 3
    ...[4, 5, 6, 7, 8, 9].map((i) => call(i, '2026-11-05T00:00:00Z')), // Nov 1..13: 6
    call(10, '2026-11-20T00:00:00Z'), // after the end: not billed
  ])
  await eventually(async () => ((await usage(t.api, meter.id, { external_customer_id: 'acme' })).value === '10' ? true : undefined), '10 calls in ClickHouse')

  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })).invoices, 1)
  clock.set(new Date('2026-11-20T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate', cancel_at: '2026-11-13T00:00:00Z' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  // October cycle: Seat 30.00, Calls 3 * 0.50 = 1.50, November's Fee 6.00; subtotal 37.50.
  //   A (line, Fee): 50% of 6.00 = 3.00. B (invoice): 10% of 30.00 + 1.50 + 3.00 = 34.50 -> 3.45,
  //   spread 3.00 / 0.15 / 0.30. total_discount 6.45, total 31.05. The Fee was charged 6.00 - 3.00 - 0.30 = 2.70.
  // Final (Nov 1..13, 12 of 30 days): Seat 30 * 12/30 = 12.00, Calls 6 * 0.50 = 3.00,
  //   unused Fee: 2.70 - 2.70 * 12/30 (1.08) = 1.62 -> -1.62 (the list price would give -3.60).
  //   A takes nothing (its line is a credit); B: 10% of 12.00 + 3.00 = 1.50, spread 1.20 / 0.30.
  //   subtotal 12.00 + 3.00 - 1.62 = 13.38; total 13.38 - 1.50 = 11.88.
  assert.deepEqual(await invoicesOf(sub.id), [
    {
      billing_reason: 'SUBSCRIPTION_CREATE', start: '10-01', end: '11-01', subtotal: '6.00', total_discount: '0.00', total: '6.00', amount_due: '6.00',
      lines: [['Fee', '1', '6.00', '0.00', '0.00', '2026-10-01', '2026-11-01']], coupons: [],
    },
    {
      billing_reason: 'SUBSCRIPTION_CYCLE', start: '10-01', end: '11-01', subtotal: '37.50', total_discount: '6.45', total: '31.05', amount_due: '31.05',
      lines: [
        ['Seat', '1', '30.00', '0.00', '3.00', '2026-10-01', '2026-11-01'],
        ['Fee', '1', '6.00', '3.00', '0.30', '2026-11-01', '2026-12-01'],
        ['Calls', '3', '1.50', '0.00', '0.15', '2026-10-01', '2026-11-01'],
      ],
      coupons: [['A half fee', '3.00', '6.00', '3.00', true], ['B ten percent', '3.45', '34.50', '31.05', false]],
    },
    {
      billing_reason: 'PRORATION', start: '11-01', end: '11-13', subtotal: '13.38', total_discount: '1.50', total: '11.88', amount_due: '11.88',
      lines: [
        ['Seat', '1', '12.00', '0.00', '1.20', '2026-11-01', '2026-11-13'],
        ['Calls', '6', '3.00', '0.00', '0.30', '2026-11-01', '2026-11-13'],
        ['Unused time: Fee', '1', '-1.62', '0.00', '0.00', '2026-11-13', '2026-12-01'],
      ],
      coupons: [['B ten percent', '1.50', '15.00', '13.50', false]],
    },
  ])
})

test('cancellation: a once coupon used by an earlier invoice does not discount the final invoice', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro', prices: [{ ...eur, amount: '6', invoice_cadence: 'ADVANCE', display_name: 'Fee' }, { ...eur, amount: '30', invoice_cadence: 'ARREAR', display_name: 'Seat' }],
  }))
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'acme', plan_id: plan.id, currency: 'EUR', start_date: '2026-10-01T00:00:00Z' }))
  const c = await created(t.api.post('/v1/coupons', { name: 'Once', type: 'percentage', percentage_off: '50', duration: 'once' }))
  await created(t.api.post('/v1/coupon_associations', { coupon_id: c.id, subscription_id: sub.id }))
  clock.set(new Date('2026-11-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  clock.set(new Date('2026-11-16T00:00:00Z'))
  assert.equal((await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate' })).status, 200)
  const [, cycle, final] = await invoicesOf(sub.id)
  // October cycle: (30.00 + 6.00) * 50% = 18.00 off, total 18.00; the coupon is used up.
  assert.deepEqual([cycle.subtotal, cycle.total_discount, cycle.total], ['36.00', '18.00', '18.00'])
  // Final, Nov 1..16 (15 of 30 days): Seat 15.00; Fee charged 3.00 (after its 3.00 share), credit 3.00 - 1.50 = -1.50.
  assert.deepEqual([final.billing_reason, final.subtotal, final.total_discount, final.total, final.coupons], ['PRORATION', '13.50', '0.00', '13.50', []])
})

test('termination credits an annual add-on billed in advance up to its own period end', async () => {
  clock.set(new Date('2026-11-01T00:00:00Z'))
  const t = await p.newTenant()
  const team = await created(t.api.post('/v1/plans', {
    name: 'Team', prices: [{ ...eur, amount: '30', invoice_cadence: 'ADVANCE', display_name: 'Seat' }, { ...eur, amount: '10', invoice_cadence: 'ARREAR', display_name: 'Support' }],
  }))
  const archive = await created(t.api.post('/v1/addons', {
    name: 'Archive', lookup_key: 'archive', prices: [{ ...eur, billing_period: 'ANNUAL', amount: '120', invoice_cadence: 'ADVANCE', display_name: 'Archive yearly' }],
  }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: team.id, currency: 'EUR', start_date: '2026-11-01T00:00:00Z' }))
  clock.set(new Date('2026-11-11T00:00:00Z'))
  const attached = await t.api.post(`/v1/subscriptions/${sub.id}/modify`, { change_type: 'addon_attach', addon_id: archive.id })
  assert.equal(attached.status, 200, JSON.stringify(attached.body))
  clock.set(new Date('2026-12-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  clock.set(new Date('2026-12-16T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const final = (await invoicesOf(sub.id)).find((i: any) => i.billing_reason === 'PRORATION' && i.start === '12-01')
  // Attach on Nov 11: Archive 120.00 for [2026-11-11, 2027-11-01) (355 of 365 days) = 116.71.
  // Final, Dec 1..16 (15 of 31 days): Support 10 * 15/31 = 4.84; unused Seat 30.00 - 30 * 15/31 (14.52) = -15.48;
  // unused Archive, on its own period [Nov 11, Nov 1 2027): used 35 of 355 days, 116.71 * 35/355 = 11.51,
  // credit 116.71 - 11.51 = -105.20. Total 4.84 - 15.48 - 105.20 = -115.84, nothing due.
  assert.deepEqual(final, {
    billing_reason: 'PRORATION', start: '12-01', end: '12-16', subtotal: '-115.84', total_discount: '0.00', total: '-115.84', amount_due: '0.00',
    lines: [
      ['Support', '1', '4.84', '0.00', '0.00', '2026-12-01', '2026-12-16'],
      ['Unused time: Seat', '1', '-15.48', '0.00', '0.00', '2026-12-16', '2027-01-01'],
      ['Unused time: Archive yearly', '1', '-105.20', '0.00', '0.00', '2026-12-16', '2027-11-01'],
    ],
    coupons: [],
  })
})

test('ended at its start after its first invoice was paid: a CREDIT invoice for the amount paid, once', async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const t = await p.newTenant()
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [{ ...eur, amount: '6', invoice_cadence: 'ADVANCE', display_name: 'Fee' }] }))
  const customer = await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'EUR', start_date: '2026-10-01T00:00:00Z' }))
  const [first] = await sql(`SELECT id FROM invoices WHERE subscription_id = ?`, [sub.id])
  assert.equal((await t.api.post(`/v1/invoices/${first.id}/finalize`, {})).status, 200)
  const paid = await t.api.post(`/v1/invoices/${first.id}/payments`, { amount: '6.00' })
  assert.equal(paid.body.invoice.payment_status, 'SUCCEEDED', JSON.stringify(paid.body))

  clock.set(new Date('2026-10-02T00:00:00Z'))
  const res = await t.api.post(`/v1/subscriptions/${sub.id}/cancel`, { cancellation_type: 'immediate', cancel_at: '2026-10-01T00:00:00Z' })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const credits = async () => sql(
    `SELECT id, customer_id, invoice_type, invoice_status, payment_status, billing_reason, subtotal::text, total::text, amount_due::text, metadata, idempotency_key
       FROM invoices WHERE tenant_id = ? AND invoice_type = 'CREDIT'`, [t.tenantId])
  const [credit, ...more] = await credits()
  assert.equal(more.length, 0)
  // The paid invoice stays FINALIZED and paid; the credit gives back its 6.00.
  const original = (await sql(`SELECT invoice_status, payment_status, invoice_number FROM invoices WHERE id = ?`, [first.id]))[0]
  assert.deepEqual([original.invoice_status, original.payment_status], ['FINALIZED', 'SUCCEEDED'])
  assert.deepEqual(
    [credit.customer_id, credit.invoice_type, credit.invoice_status, credit.payment_status, credit.billing_reason, credit.subtotal, credit.total, credit.amount_due, credit.idempotency_key],
    [customer.id, 'CREDIT', 'DRAFT', 'SUCCEEDED', 'MANUAL', '-6.00', '-6.00', '0.00', `manual:credit_of:${first.id}`],
  )
  assert.deepEqual(credit.metadata, { credited_invoice_id: first.id, subscription_id: sub.id, reason: 'subscription_ended_at_start' })
  const lines = await sql(`SELECT display_name, amount::text FROM invoice_line_items WHERE invoice_id = ?`, [credit.id])
  assert.deepEqual(lines.map((l: any) => [l.display_name, l.amount]), [[`Refund of ${original.invoice_number}`, '-6.00']])
  const drafted = await sql(`SELECT count(*)::int AS n FROM system_events_outbox WHERE tenant_id = ? AND event_name = 'invoice.drafted' AND entity_id = ?`, [t.tenantId, credit.id])
  assert.equal(drafted[0].n, 1)

  // A repeat of the termination (the cascade path runs it again for children) writes no second credit.
  await p.ctx.orm.em.fork().transactional(async (tx) => {
    const s = await tx.findOneOrFail(SubscriptionSchema, { id: sub.id })
    await terminateSubscription(p.ctx, tx, s, new Date('2026-10-01T00:00:00Z'), clock.now())
  })
  assert.equal((await credits()).length, 1)
})
