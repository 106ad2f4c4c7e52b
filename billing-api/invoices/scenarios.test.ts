// Worked invoice scenarios, end to end: usage goes through ingest -> Kafka -> aggregator ->
// ClickHouse, the billing schedule drafts the invoice, finalization applies taxes and credits.
// Every expected amount is worked out by hand in the comment beside it.
// All subscriptions are USD, monthly, started 2026-08-01 (unless said otherwise) and billed on
// 2026-09-01: the August cycle invoice carries August's arrear charges and September's advance ones.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, type ApiClient, usePlatform } from '../../test/support/platform.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { assertError } from '../../test/support/assertions.js'
import { billDueSubscriptions } from '../billing/bill-due.js'
import { finalizeDueInvoices } from './finalize-due.js'
import { finalizeLockedInvoice, lockInvoice } from './lifecycle.js'
import { eventNames, sql } from '../../test/support/invoices.js'

const START = new Date('2026-08-01T00:00:00Z')
const BILL = new Date('2026-09-01T00:00:00Z')
const clock = new ManualClock(START)
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

interface World {
  api: ApiClient
  tenantId: string
  meterId: string
  customer: any
  sub: any
  ext: string
}

const usd = { currency: 'USD', billing_period: 'MONTHLY' }
const usagePrice = (meterId: string, over: object) => ({ ...usd, type: 'USAGE', meter_id: meterId, invoice_cadence: 'ARREAR', display_name: 'API', ...over })
const fixedPrice = (amount: string, cadence: 'ADVANCE' | 'ARREAR', name = 'Fee') =>
  ({ ...usd, type: 'FIXED', billing_model: 'FLAT_FEE', amount, invoice_cadence: cadence, display_name: name })

/** A tenant with a SUM meter on property n, a plan of `prices` and one subscription. */
async function world(prices: (meterId: string) => object[], sub: object = {}): Promise<World> {
  clock.set(START)
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'api', event_name: 'api', aggregation: { type: 'SUM', field: 'n' } }))
  const plan = await created(t.api.post('/v1/plans', { name: 'Plan', prices: prices(meter.id) }))
  const ext = `c-${Math.random().toString(36).slice(2)}`
  const customer = await created(t.api.post('/v1/customers', { external_id: ext }))
  const s = await created(t.api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'USD', start_date: START.toISOString(), ...sub }))
  return { api: t.api, tenantId: t.tenantId, meterId: meter.id, customer, sub: s, ext }
}

let seq = 0
/** Sends one event per [timestamp, n] and waits until ClickHouse holds all of them. */
async function send(w: World, events: [string, number][]): Promise<void> {
  const before = Number((await usage(w.api, w.meterId, { external_customer_id: w.ext })).value)
  const total = before + events.reduce((a, [, n]) => a + n, 0)
  await ingestAll(w.api, events.map(([timestamp, n]) => ({ event_id: `e${++seq}-${w.ext}`, event_name: 'api', external_customer_id: w.ext, timestamp, properties: { n } })))
  await eventually(async () => (Number((await usage(w.api, w.meterId, { external_customer_id: w.ext })).value) === total ? true : undefined), `${total} units in ClickHouse`)
}

/** Bills the subscription at `at` and answers its invoices (all statuses), oldest period first, in full. */
async function bill(w: World, at = BILL): Promise<any[]> {
  clock.set(at)
  await billDueSubscriptions(p.ctx, { tenantId: w.tenantId })
  const rows = await sql(p, 'SELECT id FROM invoices WHERE subscription_id = ? ORDER BY period_start, created_at', [w.sub.id])
  return Promise.all(rows.map(async (r) => (await w.api.get(`/v1/invoices/${r.id}`)).body))
}

const amounts = (inv: any) => ({
  status: inv.invoice_status, subtotal: inv.subtotal, total_discount: inv.total_discount, total_tax: inv.total_tax,
  credits: inv.total_prepaid_credits_applied, total: inv.total, amount_due: inv.amount_due, amount_remaining: inv.amount_remaining,
})
/** name -> [quantity, amount, line_item_discount, invoice_level_discount, prepaid_credits_applied] */
const lines = (inv: any) => Object.fromEntries(inv.line_items.map((l: any) =>
  [l.display_name, [l.quantity, l.amount, l.line_item_discount, l.invoice_level_discount, l.prepaid_credits_applied]]))

/** A draft's amounts: no tax, no credits yet; total = subtotal - discount (given by hand). */
const draft = (subtotal: string, discount = '0.00', total = subtotal) =>
  ({ status: 'DRAFT', subtotal, total_discount: discount, total_tax: '0.00', credits: '0.00', total, amount_due: total, amount_remaining: total })

const AUG = (day: number) => `2026-08-${String(day).padStart(2, '0')}T12:00:00Z`

test('tiered slab: 750 units over 0-100 @ 0.10, 101-500 @ 0.05, above @ 0.01', async () => {
  const w = await world((m) => [usagePrice(m, { billing_model: 'TIERED', tier_mode: 'SLAB', tiers: [
    { up_to: 100, unit_amount: '0.10' }, { up_to: 500, unit_amount: '0.05' }, { up_to: null, unit_amount: '0.01' },
  ] })])
  await send(w, [[AUG(3), 250], [AUG(10), 250], [AUG(20), 250]])
  const [inv] = await bill(w)
  // 100 x 0.10 = 10.00; 400 x 0.05 = 20.00; 250 x 0.01 = 2.50 -> 32.50
  assert.deepEqual(amounts(inv), draft('32.50'))
  assert.deepEqual(lines(inv), { API: ['750', '32.50', '0.00', '0.00', '0.00'] })
})

test('tiered volume: 750 units all at the tier reached (above 500: 0.01 each + 2.00 flat)', async () => {
  const w = await world((m) => [usagePrice(m, { billing_model: 'TIERED', tier_mode: 'VOLUME', tiers: [
    { up_to: 100, unit_amount: '0.10' }, { up_to: 500, unit_amount: '0.05' }, { up_to: null, unit_amount: '0.01', flat_amount: '2.00' },
  ] })])
  await send(w, [[AUG(5), 700], [AUG(25), 50]])
  const [inv] = await bill(w)
  // 750 x 0.01 + 2.00 = 9.50
  assert.deepEqual(amounts(inv), draft('9.50'))
  assert.deepEqual(lines(inv).API.slice(0, 2), ['750', '9.50'])
})

test('package: 3.00 per started package of 100 units; 250 units -> 3 packages', async () => {
  const w = await world((m) => [usagePrice(m, { billing_model: 'PACKAGE', amount: '3.00', transform_quantity: { divide_by: 100, round: 'up' } })])
  await send(w, [[AUG(7), 250]])
  const [inv] = await bill(w)
  // ceil(250 / 100) = 3 packages x 3.00 = 9.00
  assert.deepEqual(amounts(inv), draft('9.00'))
})

test('advance fixed + arrear usage: September fee 20.00 and August usage 1234 x 0.02', async () => {
  const w = await world((m) => [fixedPrice('20.00', 'ADVANCE'), usagePrice(m, { billing_model: 'FLAT_FEE', amount: '0.02' })])
  await send(w, [[AUG(2), 1000], [AUG(30), 234], ['2026-09-02T00:00:00Z', 999]]) // September usage is not on the August invoice
  const invoices = await bill(w)
  assert.deepEqual(invoices.map((i) => i.billing_reason), ['SUBSCRIPTION_CREATE', 'SUBSCRIPTION_CYCLE'])
  const [create, inv] = invoices
  // created ACTIVE on 08-01: August's advance fee at once, 20.00 for [08-01, 09-01)
  assert.deepEqual(amounts(create), draft('20.00'))
  assert.deepEqual(lines(create), { Fee: ['1', '20.00', '0.00', '0.00', '0.00'] })
  assert.deepEqual([create.line_items[0].period_start, create.line_items[0].period_end], ['2026-08-01T00:00:00.000Z', '2026-09-01T00:00:00.000Z'])
  // 20.00 + 1234 x 0.02 = 20.00 + 24.68 = 44.68
  assert.deepEqual(amounts(inv), draft('44.68'))
  assert.deepEqual(lines(inv), { Fee: ['1', '20.00', '0.00', '0.00', '0.00'], API: ['1234', '24.68', '0.00', '0.00', '0.00'] })
  const fee = inv.line_items.find((l: any) => l.display_name === 'Fee')
  assert.deepEqual([fee.period_start, fee.period_end], ['2026-09-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z'])
})

test('mid-period start (calendar cycle from 08-15): usage of [08-15, 09-01) only, September fee in advance', async () => {
  const w = await world((m) => [fixedPrice('10.00', 'ADVANCE'), usagePrice(m, { billing_model: 'FLAT_FEE', amount: '0.10' })],
    { start_date: '2026-08-15T00:00:00Z', billing_cycle: 'calendar' })
  await send(w, [[AUG(10), 500], [AUG(15), 30], [AUG(31), 12]]) // the 500 units before the start are not billed
  const invoices = await bill(w)
  assert.deepEqual(invoices.map((i) => i.billing_reason), ['SUBSCRIPTION_CREATE', 'SUBSCRIPTION_CYCLE'])
  const [create, inv] = invoices
  // the stub [08-15, 09-01) is 17 of August's 31 days: 10.00 x 17 x 86400 / (31 x 86400) = 5.483870.. -> 5.48
  assert.deepEqual([create.period_start, create.period_end], ['2026-08-15T00:00:00.000Z', '2026-09-01T00:00:00.000Z'])
  assert.deepEqual(amounts(create), draft('5.48'))
  assert.deepEqual(lines(create), { Fee: ['1', '5.48', '0.00', '0.00', '0.00'] })
  assert.deepEqual([inv.period_start, inv.period_end], ['2026-08-15T00:00:00.000Z', '2026-09-01T00:00:00.000Z'])
  // September's fee in full + the stub's usage: 10.00 + (30 + 12) x 0.10 = 10.00 + 4.20 = 14.20
  assert.deepEqual(amounts(inv), draft('14.20'))
  assert.deepEqual(lines(inv).API.slice(0, 2), ['42', '4.20'])
})

test('entitlement hard limit: 150 units measured, the plan grants 100 (hard), 100 x 0.10 = 10.00 billed; a soft limit bills all', async () => {
  for (const [soft, adjusted, amount] of [[false, '100', '10.00'], [true, '150', '15.00']] as const) {
    const w = await world((m) => [usagePrice(m, { billing_model: 'FLAT_FEE', amount: '0.10' })])
    const feature = await created(w.api.post('/v1/features', { name: 'API calls', type: 'metered', meter_id: w.meterId }))
    await created(w.api.post('/v1/entitlements', { entity_type: 'PLAN', entity_id: w.sub.plan_id, feature_id: feature.id, usage_limit: 100, is_soft_limit: soft }))
    await send(w, [[AUG(3), 90], [AUG(20), 60]])
    const [inv] = await bill(w)
    const [line] = inv.line_items
    assert.deepEqual([line.quantity, line.adjusted_entitlement_quantity, line.amount], ['150', adjusted, amount])
    assert.deepEqual(amounts(inv), draft(amount))
  }
})

/** Fee 80.00 in arrear + 0.50 per unit; 40 units -> 20.00; subtotal 100.00. */
async function couponWorld() {
  const w = await world((m) => [fixedPrice('80.00', 'ARREAR'), usagePrice(m, { billing_model: 'FLAT_FEE', amount: '0.50' })])
  await send(w, [[AUG(12), 40]])
  return w
}

async function coupon(w: World, body: object, attach: object = {}) {
  const c = await created(w.api.post('/v1/coupons', { name: 'C', ...body }))
  const a = await created(w.api.post('/v1/coupon_associations', { coupon_id: c.id, subscription_id: w.sub.id, ...attach }))
  return { coupon: c, association: a }
}

test('coupon percentage (invoice level, forever): 15% of 100.00 spread over the lines; applied again next month', async () => {
  const w = await couponWorld()
  const { coupon: c, association } = await coupon(w, { type: 'percentage', percentage_off: '15', duration: 'forever' })
  assert.equal((await w.api.get(`/v1/coupons/${c.id}`)).body.total_redemptions, 1)
  const [aug] = await bill(w)
  // 15% of 100.00 = 15.00: Fee 80/100 of it = 12.00, API 20/100 = 3.00; total 85.00
  assert.deepEqual(amounts(aug), draft('100.00', '15.00', '85.00'))
  assert.deepEqual(lines(aug), { Fee: ['1', '80.00', '0.00', '12.00', '0.00'], API: ['40', '20.00', '0.00', '3.00', '0.00'] })
  assert.equal(aug.coupon_applications.length, 1)
  const app = aug.coupon_applications[0]
  assert.deepEqual(
    [app.coupon_id, app.coupon_association_id, app.invoice_line_item_id, app.discount_percentage, app.discounted_amount, app.original_price, app.final_price, app.currency],
    [c.id, association.id, null, '15', '15.00', '100.00', '85.00', 'USD'],
  )
  assert.equal(app.coupon_snapshot.percentage_off, '15')
  // September: no usage, fee 80.00 -> 15% = 12.00 again (forever); total 68.00.
  const [, sep] = await bill(w, new Date('2026-10-01T00:00:00Z'))
  assert.deepEqual(amounts(sep), draft('80.00', '12.00', '68.00'))
})

test('coupon fixed amount (line item, once): 5.00 off the API line of the first invoice only', async () => {
  const w = await couponWorld()
  const apiLine = w.sub.line_items.find((l: any) => l.display_name === 'API')
  await coupon(w, { type: 'fixed', amount_off: '5.00', currency: 'USD', duration: 'once' }, { subscription_line_item_id: apiLine.id })
  const [aug] = await bill(w)
  // API 20.00 - 5.00 = 15.00; total 100.00 - 5.00 = 95.00
  assert.deepEqual(amounts(aug), draft('100.00', '5.00', '95.00'))
  assert.deepEqual(lines(aug), { Fee: ['1', '80.00', '0.00', '0.00', '0.00'], API: ['40', '20.00', '5.00', '0.00', '0.00'] })
  const app = aug.coupon_applications[0]
  const line = aug.line_items.find((l: any) => l.display_name === 'API')
  assert.deepEqual([app.invoice_line_item_id, app.discount_percentage, app.discounted_amount, app.original_price, app.final_price], [line.id, null, '5.00', '20.00', '15.00'])
  // once: the September invoice (fee only) is not discounted.
  const [, sep] = await bill(w, new Date('2026-10-01T00:00:00Z'))
  assert.deepEqual(amounts(sep), draft('80.00'))
  assert.deepEqual(sep.coupon_applications, [])
  // A fixed coupon in another currency is refused and redeems nothing.
  const eur = await created(w.api.post('/v1/coupons', { name: 'E', type: 'fixed', amount_off: '1.00', currency: 'EUR' }))
  assertError(await w.api.post('/v1/coupon_associations', { coupon_id: eur.id, subscription_id: w.sub.id }), 400, 'validation_error', /EUR/)
  assert.equal((await w.api.get(`/v1/coupons/${eur.id}`)).body.total_redemptions, 0)
})

test('coupon repeating for 2 periods: August and September discounted, October not', async () => {
  const w = await world(() => [fixedPrice('40.00', 'ARREAR')])
  await coupon(w, { type: 'fixed', amount_off: '10.00', currency: 'USD', duration: 'repeating', duration_in_periods: 2 })
  await bill(w)
  await bill(w, new Date('2026-10-01T00:00:00Z'))
  const all = await bill(w, new Date('2026-11-01T00:00:00Z'))
  // 40.00 - 10.00 = 30.00 twice, then 40.00
  assert.deepEqual(all.map((i) => [i.period_start.slice(0, 10), i.total_discount, i.total]), [
    ['2026-08-01', '10.00', '30.00'], ['2026-09-01', '10.00', '30.00'], ['2026-10-01', '0.00', '40.00'],
  ])
})

test('tax (percentage and fixed) on the discounted amount, applied at finalization only', async () => {
  const w = await world(() => [fixedPrice('100.00', 'ARREAR')])
  await coupon(w, { type: 'percentage', percentage_off: '10', duration: 'forever' })
  const vat = await created(w.api.post('/v1/taxes/rates', { name: 'VAT', code: 'VAT', percentage_value: '20' }))
  const stamp = await created(w.api.post('/v1/taxes/rates', { name: 'Stamp', code: 'STAMP', fixed_value: '1.50', currency: 'USD' }))
  const vatAssoc = await created(w.api.post('/v1/taxes/associations', { tax_rate_id: vat.id, entity_type: 'subscription', entity_id: w.sub.id }), 200)
  const stampAssoc = await created(w.api.post('/v1/taxes/associations', { tax_rate_id: stamp.id, entity_type: 'customer', entity_id: w.customer.id, priority: 1 }), 200)
  const [inv] = await bill(w)
  assert.deepEqual(amounts(inv), draft('100.00', '10.00', '90.00'), 'a draft carries no tax')
  assert.deepEqual(inv.taxes, [])
  const res = await w.api.post(`/v1/invoices/${inv.id}/finalize`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const fin = res.body
  // taxable 100.00 - 10.00 = 90.00; VAT 20% = 18.00; stamp 1.50; tax 19.50; total 90.00 + 19.50 = 109.50
  assert.deepEqual(amounts(fin), {
    status: 'FINALIZED', subtotal: '100.00', total_discount: '10.00', total_tax: '19.50', credits: '0.00', total: '109.50', amount_due: '109.50', amount_remaining: '109.50',
  })
  assert.deepEqual(fin.taxes.map((t: any) => [t.tax_association_id, t.tax_rate_id, t.taxable_amount, t.tax_amount, t.idempotency_key, t.tax_rate.code]).sort(), [
    [vatAssoc.id, vat.id, '90.00', '18.00', `${inv.id}:${vatAssoc.id}`, 'VAT'],
    [stampAssoc.id, stamp.id, '90.00', '1.50', `${inv.id}:${stampAssoc.id}`, 'STAMP'],
  ].sort())
  assert.equal(fin.payment_status, 'PENDING')
})

async function wallet(w: World, credits: string, conversionRate = '1') {
  const wal = await created(w.api.post('/v1/wallets', { customer_id: w.customer.id, currency: 'USD', conversion_rate: conversionRate }), 200)
  await created(w.api.post(`/v1/wallets/${wal.id}/top-up`, { credits, transaction_reason: 'PURCHASED', idempotency_key: `top-${wal.id}` }), 200)
  return wal
}
const balance = async (w: World, walletId: string) => (await w.api.get(`/v1/wallets/${walletId}`)).body.balance

test('wallet credits are applied at finalization, not at draft: 30 credits pay 30.00 of 50.00', async () => {
  const w = await world((m) => [fixedPrice('30.00', 'ARREAR'), usagePrice(m, { billing_model: 'FLAT_FEE', amount: '0.50' })])
  await send(w, [[AUG(9), 40]])
  const wal = await wallet(w, '30')
  const [inv] = await bill(w)
  assert.deepEqual(amounts(inv), draft('50.00'))
  assert.equal(await balance(w, wal.id), '30', 'nothing debited at draft')
  const fin = (await w.api.post(`/v1/invoices/${inv.id}/finalize`, {})).body
  // 50.00 - 30.00 = 20.00 due; the credits spread 30:20 over the lines -> 18.00 and 12.00
  assert.deepEqual(amounts(fin), {
    status: 'FINALIZED', subtotal: '50.00', total_discount: '0.00', total_tax: '0.00', credits: '30.00', total: '50.00', amount_due: '20.00', amount_remaining: '20.00',
  })
  assert.deepEqual(lines(fin), { Fee: ['1', '30.00', '0.00', '0.00', '18.00'], API: ['40', '20.00', '0.00', '0.00', '12.00'] })
  assert.equal(fin.payment_status, 'PENDING')
  assert.equal(await balance(w, wal.id), '0')
  const [debit] = await sql(p, `SELECT credit_amount::text, amount::text, reference, idempotency_key, metadata FROM wallet_transactions WHERE wallet_id = ? AND type = 'debit'`, [wal.id])
  assert.deepEqual([Number(debit.credit_amount), Number(debit.amount), debit.reference, debit.idempotency_key], [30, 30, inv.id, `invoice:${inv.id}:prepaid_credits`])
  assert.ok(debit.metadata.consumed_credit_tx_ids, 'the ledger records the consumed credits')
  // A payment settles what is due after the credits.
  const paid = await w.api.post(`/v1/invoices/${inv.id}/payments`, { amount: '20.00' })
  assert.equal(paid.status, 201, JSON.stringify(paid.body))
  assert.deepEqual([paid.body.invoice.payment_status, paid.body.invoice.amount_remaining], ['SUCCEEDED', '0.00'])
})

test('wallet at conversion rate 2 pays all of a taxed invoice: 50.00 + 10% = 55.00 takes 27.5 of 40 credits; SUCCEEDED', async () => {
  const w = await world(() => [fixedPrice('50.00', 'ARREAR')])
  const tax = await created(w.api.post('/v1/taxes/rates', { name: 'T', code: 'T10', percentage_value: '10' }))
  await created(w.api.post('/v1/taxes/associations', { tax_rate_id: tax.id, entity_type: 'tenant', entity_id: w.tenantId }), 200)
  const wal = await wallet(w, '40', '2') // 40 credits worth 80.00
  const [inv] = await bill(w)
  clock.set(new Date('2026-09-01T03:00:00Z'))
  assert.equal(await finalizeDueInvoices(p.ctx, { tenantId: w.tenantId }), 1, 'the finalization job, 2 hours after the draft')
  const fin = (await w.api.get(`/v1/invoices/${inv.id}`)).body
  // tax 5.00; total 55.00; credits 55.00 (= 27.5 credits x 2); due 0.00
  assert.deepEqual(amounts(fin), {
    status: 'FINALIZED', subtotal: '50.00', total_discount: '0.00', total_tax: '5.00', credits: '55.00', total: '55.00', amount_due: '0.00', amount_remaining: '0.00',
  })
  assert.deepEqual([fin.payment_status, fin.paid_at], ['SUCCEEDED', '2026-09-01T03:00:00.000Z'])
  assert.equal(await balance(w, wal.id), '12.5')
})

test('a retried finalization never debits the wallet twice (two concurrent finalize calls)', async () => {
  const w = await world(() => [fixedPrice('25.00', 'ARREAR')])
  const wal = await wallet(w, '100')
  const [inv] = await bill(w)
  const results = await Promise.all([1, 2, 3].map(() => w.api.post(`/v1/invoices/${inv.id}/finalize`, {})))
  assert.deepEqual(results.map((r) => r.status).sort(), [200, 400, 400], JSON.stringify(results.map((r) => r.body)))
  for (const r of results.filter((x) => x.status === 400)) assertError(r, 400, 'invalid_operation', /FINALIZED/)
  assert.equal(await balance(w, wal.id), '75')
  const debits = await sql(p, `SELECT count(*)::int AS n FROM wallet_transactions WHERE wallet_id = ? AND type = 'debit'`, [wal.id])
  assert.equal(debits[0].n, 1)
  assert.equal((await w.api.get(`/v1/invoices/${inv.id}`)).body.total_prepaid_credits_applied, '25.00')
})

test('a finalization that fails after the credits and taxes leaves nothing behind (one transaction)', async () => {
  const w = await world(() => [fixedPrice('25.00', 'ARREAR')])
  const tax = await created(w.api.post('/v1/taxes/rates', { name: 'T', code: 'T5', percentage_value: '5' }))
  await created(w.api.post('/v1/taxes/associations', { tax_rate_id: tax.id, entity_type: 'customer', entity_id: w.customer.id }), 200)
  const wal = await wallet(w, '100')
  const [inv] = await bill(w)
  const scope = { tenant_id: w.tenantId, environment_id: inv.environment_id }
  await assert.rejects(p.ctx.orm.em.fork().transactional(async (tx) => {
    const done = await finalizeLockedInvoice(p.ctx, tx, await lockInvoice(tx, scope, inv.id))
    assert.equal(done.total_prepaid_credits_applied, '26.25', 'credits were applied inside the transaction') // 25.00 + 5% = 26.25
    throw new Error('crash after finalizing')
  }), /crash after finalizing/)
  assert.equal(await balance(w, wal.id), '100')
  const [rows] = await sql(p, `SELECT (SELECT count(*)::int FROM applied_taxes WHERE entity_id = ?) AS taxes,
    (SELECT count(*)::int FROM wallet_transactions WHERE wallet_id = ? AND type = 'debit') AS debits`, [inv.id, wal.id])
  assert.deepEqual(rows, { taxes: 0, debits: 0 })
  assert.deepEqual(amounts((await w.api.get(`/v1/invoices/${inv.id}`)).body), draft('25.00'))
  // The real finalization then applies them once.
  const fin = (await w.api.post(`/v1/invoices/${inv.id}/finalize`, {})).body
  assert.deepEqual([fin.total_tax, fin.total, fin.total_prepaid_credits_applied, fin.amount_due, fin.payment_status], ['1.25', '26.25', '26.25', '0.00', 'SUCCEEDED'])
  assert.equal(await balance(w, wal.id), '73.75')
})

test('zero amount: no usage -> SKIPPED, never finalized, no coupon application', async () => {
  const w = await world((m) => [usagePrice(m, { billing_model: 'FLAT_FEE', amount: '0.50' })])
  await coupon(w, { type: 'percentage', percentage_off: '50', duration: 'once' })
  const [inv] = await bill(w)
  assert.deepEqual([inv.invoice_status, inv.payment_status, inv.subtotal, inv.total, inv.invoice_number], ['SKIPPED', 'SUCCEEDED', '0.00', '0.00', null])
  assert.deepEqual(inv.coupon_applications, [])
  assertError(await w.api.post(`/v1/invoices/${inv.id}/finalize`, {}), 400, 'invalid_operation', /SKIPPED/)
})

test('trial-start invoice: zero, SKIPPED and paid under manual collection; the paid period starts with its advance fee', async () => {
  const w = await world(() => [{ ...fixedPrice('20.00', 'ADVANCE'), trial_period_days: 14 }], { collection_method: 'send_invoice' })
  assert.equal(w.sub.subscription_status, 'TRIALING')
  const [trial] = await bill(w, START)
  assert.deepEqual(
    [trial.billing_reason, trial.invoice_status, trial.payment_status, trial.total, trial.period_start, trial.period_end],
    ['SUBSCRIPTION_TRIAL_START', 'SKIPPED', 'SUCCEEDED', '0.00', '2026-08-01T00:00:00.000Z', '2026-08-15T00:00:00.000Z'],
  )
  const [, first] = await bill(w, new Date('2026-08-15T00:00:00Z'))
  // The first paid period [08-15, 09-15): its advance fee 20.00
  assert.deepEqual([first.billing_reason, first.period_start], ['SUBSCRIPTION_CREATE', '2026-08-15T00:00:00.000Z'])
  assert.deepEqual(amounts(first), draft('20.00'))
  // A trial-start invoice cannot be recomputed: its lines are not the price list's.
  assertError(await w.api.post(`/v1/invoices/${trial.id}/compute?sync=true`, {}), 400, 'invalid_operation', /SUBSCRIPTION_TRIAL_START/)
})

test('recompute a DRAFT: late usage and a new coupon replace its lines; version and last_computed_at move', async () => {
  const w = await world((m) => [usagePrice(m, { billing_model: 'FLAT_FEE', amount: '1.00' })])
  await send(w, [[AUG(4), 10]])
  const [inv] = await bill(w)
  assert.deepEqual(amounts(inv), draft('10.00'))
  await send(w, [[AUG(28), 5]]) // arrives late
  // Attached now (09-01) with the default start_date, a coupon would start after August; this one is backdated.
  await coupon(w, { type: 'percentage', percentage_off: '20', duration: 'once' }, { start_date: '2026-08-01T00:00:00Z' })
  clock.set(new Date('2026-09-01T01:00:00Z'))
  const res = await w.api.post(`/v1/invoices/${inv.id}/compute?sync=true`, { version: inv.version })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  // 15 x 1.00 = 15.00; 20% = 3.00; total 12.00
  assert.deepEqual(amounts(res.body), draft('15.00', '3.00', '12.00'))
  assert.deepEqual([res.body.version, res.body.last_computed_at], [inv.version + 1, '2026-09-01T01:00:00.000Z'])
  assert.equal(res.body.line_items.length, 1)
  assert.equal(res.body.coupon_applications.length, 1)
  // Recomputing again keeps one application: the invoice's own does not use up the `once` coupon.
  const again = (await w.api.post(`/v1/invoices/${inv.id}/compute?sync=true`, {})).body
  assert.deepEqual(amounts(again), draft('15.00', '3.00', '12.00'))
  const [n] = await sql(p, 'SELECT count(*)::int AS lines, (SELECT count(*)::int FROM coupon_applications WHERE invoice_id = ?) AS apps FROM invoice_line_items WHERE invoice_id = ?', [inv.id, inv.id])
  assert.deepEqual(n, { lines: 1, apps: 1 })
  // A stale version is refused and changes nothing.
  assertError(await w.api.post(`/v1/invoices/${inv.id}/compute?sync=true`, { version: inv.version }), 409, 'version_conflict')
  assert.deepEqual(await eventNames(p, inv.id), ['invoice.drafted'])
})

test('recompute a SKIPPED invoice that now has usage: it becomes DRAFT and publishes invoice.drafted', async () => {
  const w = await world((m) => [usagePrice(m, { billing_model: 'FLAT_FEE', amount: '0.25' })])
  const [inv] = await bill(w)
  assert.equal(inv.invoice_status, 'SKIPPED')
  await send(w, [[AUG(30), 8]])
  const res = await w.api.post(`/v1/invoices/${inv.id}/compute?sync=true`, {})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  // 8 x 0.25 = 2.00
  assert.deepEqual(amounts(res.body), draft('2.00'))
  assert.equal(res.body.payment_status, 'PENDING')
  assert.deepEqual(await eventNames(p, inv.id), ['invoice.drafted'])
})

test('recompute refuses FINALIZED invoices (400 invalid_operation) and unknown ids (404), writing nothing', async () => {
  const w = await world(() => [fixedPrice('12.00', 'ARREAR')])
  const [inv] = await bill(w)
  const fin = (await w.api.post(`/v1/invoices/${inv.id}/finalize`, {})).body
  assertError(await w.api.post(`/v1/invoices/${inv.id}/compute?sync=true`, {}), 400, 'invalid_operation', /FINALIZED/)
  const now = (await w.api.get(`/v1/invoices/${inv.id}`)).body
  assert.deepEqual([now.version, now.last_computed_at, now.total], [fin.version, fin.last_computed_at, '12.00'])
  assertError(await w.api.post('/v1/invoices/inv_nope/compute?sync=true', {}), 404, 'not_found')
})

test('preview shows coupon discounts and no taxes', async () => {
  const w = await couponWorld()
  await coupon(w, { type: 'fixed', amount_off: '7.00', currency: 'USD', duration: 'forever' })
  const res = await w.api.post('/v1/invoices/internal/preview', { subscription_id: w.sub.id })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  // 100.00 - 7.00 = 93.00; 7.00 over 80:20 -> 5.60 and 1.40
  assert.deepEqual([res.body.subtotal, res.body.total_discount, res.body.total_tax, res.body.total], ['100.00', '7.00', '0.00', '93.00'])
  assert.deepEqual(res.body.line_items.map((l: any) => [l.display_name, l.invoice_level_discount]).sort(), [['API', '1.40'], ['Fee', '5.60']])
  assert.equal(res.body.coupon_applications[0].discounted_amount, '7.00')
  assert.equal((await sql(p, 'SELECT count(*)::int AS n FROM invoices WHERE subscription_id = ?', [w.sub.id]))[0].n, 0, 'a preview writes nothing')
})
