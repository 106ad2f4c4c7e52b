// Billing day, set-based (bill-due.ts): hand-computed invoices of a batch mixing price models,
// a coupon, a tax, a wallet and a hierarchy; crashes inside and between batches, then a rerun
// of the same run; the late-event rule on both sides of the ingestion watermark. Usage goes
// through ingest -> Kafka -> aggregator -> ClickHouse; the watermark is the real one.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, usePlatform, type ApiClient } from '../../test/support/platform.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { sql } from '../../test/support/invoices.js'
import { billDueSubscriptions, runBilling } from './bill-due.js'
import { recomputeLateUsage } from './late-usage.js'
import { kafkaIngestWatermark, noWatermark } from './ingest-watermark.js'
import { createKafka } from '../../platform/kafka.js'
import { finalizeDueInvoices } from '../invoices/finalize-due.js'
import { clickhouseUsage } from '../meters/index.js'

const OCT = new Date('2026-10-01T00:00:00Z')
const NOV = new Date('2026-11-01T00:00:00Z')
const clock = new ManualClock(OCT)
// The aggregator can be held between its ClickHouse write and its offset commit: the usage is
// visible, the ingestion watermark has not passed it.
let hold: Promise<void> | undefined
const p = usePlatform({
  services: ['billing-api', 'ingest', 'aggregator'], clock,
  aggregatorHooks: { afterInsert: async () => { await hold } },
  config: { billing: { batchSize: 2, runConcurrency: 2, waitForIngestion: true, watermarkGraceMs: 0, watermarkWaitMs: 300 } },
})

const usd = { currency: 'USD', billing_period: 'MONTHLY' }
let seq = 0

async function tenantWithPlan() {
  clock.set(OCT)
  const t = await p.newTenant()
  const api = await created(t.api.post('/v1/meters', { name: 'api', event_name: 'api', aggregation: { type: 'SUM', field: 'n' } }))
  const gb = await created(t.api.post('/v1/meters', { name: 'gb', event_name: 'gb', aggregation: { type: 'SUM', field: 'n' } }))
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Mixed',
    prices: [
      { ...usd, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '20.00', invoice_cadence: 'ADVANCE', display_name: 'Fee' },
      { ...usd, type: 'USAGE', meter_id: api.id, invoice_cadence: 'ARREAR', display_name: 'API', billing_model: 'FLAT_FEE', amount: '0.10' },
      { ...usd, type: 'USAGE', meter_id: api.id, invoice_cadence: 'ARREAR', display_name: 'Bundles', billing_model: 'PACKAGE', amount: '3.00', transform_quantity: { divide_by: 500, round: 'up' } },
      { ...usd, type: 'USAGE', meter_id: gb.id, invoice_cadence: 'ARREAR', display_name: 'Storage', billing_model: 'TIERED', tier_mode: 'VOLUME', tiers: [{ up_to: 100, unit_amount: '1.00' }, { up_to: null, unit_amount: '0.50', flat_amount: '10.00' }] },
    ],
  }))
  return { t, api, gb, plan }
}

/** Ingests [customer, meter event name, n, timestamp] and waits until ClickHouse counts `expect` for the api meter. */
async function send(api: ApiClient, meterId: string, events: [string, string, number, string][], expect: number) {
  await ingestAll(api, events.map(([c, name, n, ts]) => ({ event_id: `bd-${++seq}`, event_name: name, external_customer_id: c, timestamp: ts, properties: { n } })))
  await eventually(async () => (Number((await usage(api, meterId, {})).value) === expect ? true : undefined), `${expect} in ClickHouse`)
}

/** Waits until ClickHouse counts `expect` for a meter. */
async function counted(api: ApiClient, meterId: string, expect: number) {
  await eventually(async () => (Number((await usage(api, meterId, {})).value) === expect ? true : undefined), `${expect} in ClickHouse`)
}

const invoiceOf = async (subscriptionId: string, reason = 'SUBSCRIPTION_CYCLE', periodStart?: string) => {
  const [inv] = await sql(p, `SELECT id, invoice_status, subtotal::text, total_discount::text, total_tax::text, total_prepaid_credits_applied::text AS credits,
      total::text, amount_due::text, invoice_number FROM invoices WHERE subscription_id = ? AND billing_reason = ? AND period_start = coalesce(?::timestamptz, period_start)
      ORDER BY period_start LIMIT 1`, [subscriptionId, reason, periodStart ?? null])
  if (!inv) return undefined
  inv.lines = (await sql(p, `SELECT display_name, quantity::text, amount::text FROM invoice_line_items WHERE invoice_id = ? ORDER BY display_name`, [inv.id]))
    .map((l: any) => [l.display_name, l.quantity, l.amount])
  return inv
}

test('a billing batch prices mixed models, coupons, a hierarchy, then taxes and a wallet at finalization, to the cent', async () => {
  const { t, api, plan } = await tenantWithPlan()
  for (const c of ['a', 'b', 'c', 'p', 'k']) await created(t.api.post('/v1/customers', { external_id: c }))
  const subscribe = (body: object) => created(t.api.post('/v1/subscriptions', { plan_id: plan.id, currency: 'USD', start_date: OCT.toISOString(), ...body }))
  const a = await subscribe({ external_customer_id: 'a' })
  const b = await subscribe({ external_customer_id: 'b' })
  const c = await subscribe({ external_customer_id: 'c' })
  const parent = await subscribe({ external_customer_id: 'p', inheritance: { child_external_customer_ids: ['k'] } })
  const coupon = await created(t.api.post('/v1/coupons', { name: 'Ten', type: 'percentage', percentage_off: '10', duration: 'forever' }))
  await created(t.api.post('/v1/coupon_associations', { coupon_id: coupon.id, subscription_id: a.id }))
  const vat = await created(t.api.post('/v1/taxes/rates', { name: 'VAT', code: 'VAT', percentage_value: '20' }))
  const customerA = (await t.api.get(`/v1/subscriptions/${a.id}`)).body.customer_id
  await created(t.api.post('/v1/taxes/associations', { tax_rate_id: vat.id, entity_type: 'customer', entity_id: customerA }), 200)
  const customerB = (await t.api.get(`/v1/subscriptions/${b.id}`)).body.customer_id
  const wallet = await created(t.api.post('/v1/wallets', { customer_id: customerB, currency: 'USD', conversion_rate: '1' }), 200)
  await created(t.api.post(`/v1/wallets/${wallet.id}/top-up`, { credits: '30', transaction_reason: 'PURCHASED', idempotency_key: `top-${wallet.id}` }), 200)
  clock.set(new Date('2026-10-20T00:00:00Z'))
  const ts = '2026-10-15T12:00:00Z'
  await send(t.api, api.id, [
    ['a', 'api', 1234, ts], ['a', 'gb', 150, ts], ['b', 'api', 500, ts], ['b', 'gb', 80, ts],
    ['p', 'api', 100, ts], ['p', 'gb', 60, ts], ['k', 'api', 200, ts], ['k', 'gb', 70, ts],
  ], 2034)

  clock.set(NOV)
  // 5 subscriptions due, batches of 2, two at once: a, b, c and the parent are invoiced, the child only moves on
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 5, invoices: 4 })
  // a: API 1234 x 0.10 = 123.40; Bundles ceil(1234 / 500) = 3 x 3.00 = 9.00; Storage 150 (volume, above 100)
  // 150 x 0.50 + 10.00 = 85.00; November's fee 20.00. Subtotal 237.40, 10 % off 23.74, total 213.66.
  assert.deepEqual(await invoiceOf(a.id).then((i) => [i.invoice_status, i.subtotal, i.total_discount, i.total, i.lines]), ['DRAFT', '237.40', '23.74', '213.66', [
    ['API', '1234', '123.40'], ['Bundles', '1234', '9.00'], ['Fee', '1', '20.00'], ['Storage', '150', '85.00'],
  ]])
  // b: API 50.00; Bundles 1 x 3.00; Storage 80 x 1.00 = 80.00; fee 20.00: 153.00
  assert.deepEqual(await invoiceOf(b.id).then((i) => [i.subtotal, i.total_discount, i.total, i.lines]), ['153.00', '0.00', '153.00', [
    ['API', '500', '50.00'], ['Bundles', '500', '3.00'], ['Fee', '1', '20.00'], ['Storage', '80', '80.00'],
  ]])
  // c: no usage, the fee alone: 20.00
  assert.deepEqual(await invoiceOf(c.id).then((i) => [i.total, i.lines]), ['20.00', [['API', '0', '0.00'], ['Bundles', '0', '0.00'], ['Fee', '1', '20.00'], ['Storage', '0', '0.00']]])
  // the parent pools its child's usage: API 300 x 0.10 = 30.00; Bundles 1 x 3.00; Storage 130: 130 x 0.50 + 10.00 = 75.00; fee 20.00: 128.00
  assert.deepEqual(await invoiceOf(parent.id).then((i) => [i.total, i.lines]), ['128.00', [['API', '300', '30.00'], ['Bundles', '300', '3.00'], ['Fee', '1', '20.00'], ['Storage', '130', '75.00']]])
  const subs = await sql(p, `SELECT count(*)::int AS n FROM subscriptions WHERE tenant_id = ? AND current_period_start = ?`, [t.tenantId, NOV])
  assert.equal(subs[0].n, 5, 'every period advanced, the child included')
  // one invoice.drafted per non-zero cycle invoice, in the outbox for the relay (webhooks)
  const drafted = await sql(p, `SELECT count(*)::int AS n FROM system_events_outbox e JOIN invoices i ON i.id = e.entity_id
      WHERE e.tenant_id = ? AND e.event_name = 'invoice.drafted' AND i.billing_reason = 'SUBSCRIPTION_CYCLE'`, [t.tenantId])
  assert.equal(drafted[0].n, 4)

  // Finalization 2 hours later: a's VAT 20 % of 213.66 = 42.732 -> 42.73, total 256.39. b's wallet of 30 credits
  // first pays its October create invoice (20.00, computed earlier), then 10.00 of 153.00: 143.00 due.
  clock.set(new Date('2026-11-01T02:00:01Z'))
  await finalizeDueInvoices(p.ctx, { tenantId: t.tenantId, beforeFinalize: recomputeLateUsage(p.ctx) })
  assert.deepEqual(await invoiceOf(a.id).then((i) => [i.invoice_status, i.total_tax, i.total, i.amount_due]), ['FINALIZED', '42.73', '256.39', '256.39'])
  assert.deepEqual(await invoiceOf(b.id).then((i) => [i.invoice_status, i.credits, i.total, i.amount_due]), ['FINALIZED', '10.00', '153.00', '143.00'])
  // numbers are gapless for the environment: the four October create invoices and the four cycle invoices
  const numbers = (await sql(p, `SELECT invoice_number FROM invoices WHERE tenant_id = ? AND invoice_number IS NOT NULL ORDER BY invoice_number`, [t.tenantId])).map((r: any) => r.invoice_number)
  assert.deepEqual(numbers, Array.from({ length: numbers.length }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`))
  assert.equal(numbers.length, 8)
})

test('a run killed inside a batch and between two batches, then rerun: every subscription billed once, the figures true, numbers gapless', async () => {
  const { t, plan } = await tenantWithPlan()
  const subs: string[] = []
  for (let i = 0; i < 7; i++) {
    await created(t.api.post('/v1/customers', { external_id: `crash-${i}` }))
    subs.push((await created(t.api.post('/v1/subscriptions', { plan_id: plan.id, currency: 'USD', start_date: OCT.toISOString(), external_customer_id: `crash-${i}` }))).id)
  }
  clock.set(NOV)
  const runId = `crash-run-${t.tenantId}`
  const only = { tenantId: t.tenantId, runId, batchSize: 2, concurrency: 1 }
  // killed inside its second batch (before the commit): the first batch stays, the second is rolled back whole
  await assert.rejects(runBilling(p.ctx, { ...only, hooks: { beforeCommit: (n) => { if (n === 2) throw new Error('killed inside a batch') } } }), /killed inside/)
  const billed = async () => (await sql(p, `SELECT count(*)::int AS n FROM invoices WHERE subscription_id IN (${subs.map(() => '?').join(', ')}) AND billing_reason = 'SUBSCRIPTION_CYCLE'`, subs))[0].n
  assert.equal(await billed(), 2)
  // the retried job (same run) killed after its first batch committed
  await assert.rejects(runBilling(p.ctx, { ...only, hooks: { afterCommit: () => { throw new Error('killed between batches') } } }), /killed between/)
  assert.equal(await billed(), 4)
  // the last attempt finishes the run; its record counts what every attempt committed
  const run = await runBilling(p.ctx, only)
  assert.deepEqual([run.state, run.attempts, run.subscriptions, run.invoices, run.failures, run.conflicts], ['completed', 3, 7, 7, 0, 0])
  assert.equal(await billed(), 7)
  const periods = await sql(p, `SELECT count(*)::int AS n FROM subscriptions WHERE id IN (${subs.map(() => '?').join(', ')}) AND current_period_start = ?`, [...subs, NOV])
  assert.equal(periods[0].n, 7)
  // a rerun of the tick finds nothing; each cycle invoice is 20.00 (the fee; no usage)
  assert.deepEqual(await billDueSubscriptions(p.ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
  const totals = await sql(p, `SELECT DISTINCT total::text AS total FROM invoices WHERE tenant_id = ? AND billing_reason = 'SUBSCRIPTION_CYCLE'`, [t.tenantId])
  assert.deepEqual(totals, [{ total: '20.00' }])
  // two finalization workers at once, batches of 3: every number of the environment exactly once
  clock.set(new Date('2026-11-01T02:00:01Z'))
  const [x, y] = await Promise.all([finalizeDueInvoices(p.ctx, { tenantId: t.tenantId, batchSize: 3 }), finalizeDueInvoices(p.ctx, { tenantId: t.tenantId, batchSize: 3 })])
  assert.equal(x + y, 14, 'seven create and seven cycle invoices')
  const numbers = (await sql(p, `SELECT invoice_number FROM invoices WHERE tenant_id = ? AND invoice_number IS NOT NULL ORDER BY invoice_number`, [t.tenantId])).map((r: any) => r.invoice_number)
  assert.deepEqual(numbers, Array.from({ length: 14 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`))
})

test('late events: billed only after the watermark passed the period end; acknowledged later, recomputed at finalization; after it, adjusted on the next invoice once', async () => {
  const { t, api, gb, plan } = await tenantWithPlan()
  await created(t.api.post('/v1/customers', { external_id: 'late' }))
  const sub = await created(t.api.post('/v1/subscriptions', { plan_id: plan.id, currency: 'USD', start_date: OCT.toISOString(), external_customer_id: 'late' }))
  clock.set(new Date('2026-10-15T00:00:00Z'))
  await send(t.api, api.id, [['late', 'api', 100, '2026-10-10T00:00:00Z'], ['late', 'gb', 80, '2026-10-10T00:00:00Z']], 100)
  await counted(t.api, gb.id, 80)

  // Acknowledged before the period ended; the aggregator wrote it but has not committed it yet.
  // (A watermark of its own: the file's clock went back to October since the other tests sampled it.)
  const watermark = kafkaIngestWatermark({ admin: createKafka(p.config, 'late-test').admin(), topic: p.config.eventsTopic, groupId: p.config.aggregatorGroupId, clock })
  const ctx = { ...p.ctx, ingestWatermark: watermark }
  let release!: () => void
  hold = new Promise((r) => (release = r))
  clock.set(new Date('2026-10-31T23:59:50Z'))
  await send(t.api, api.id, [['late', 'api', 50, '2026-10-31T23:00:00Z']], 150)
  clock.set(new Date('2026-11-01T00:00:30Z'))
  assert.deepEqual(await billDueSubscriptions(ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 }, 'the watermark has not passed November 1')
  release()
  hold = undefined
  await eventually(async () => ((await billDueSubscriptions(ctx, { tenantId: t.tenantId })).invoices === 1 ? true : undefined), 'billed once the watermark passed')
  // API 150 x 0.10 = 15.00; Bundles ceil(150 / 500) = 1 x 3.00; fee 20.00; Storage 80 x 1.00 = 80.00: 118.00
  assert.deepEqual(await invoiceOf(sub.id).then((i) => [i.total, i.lines[0]]), ['118.00', ['API', '150', '15.00']])

  // Backdated into October after the draft: the finalization recomputes the draft first.
  clock.set(new Date('2026-11-01T01:00:00Z'))
  await send(t.api, api.id, [['late', 'api', 20, '2026-10-31T23:30:00Z']], 170)
  assert.equal((await invoiceOf(sub.id)).total, '118.00', 'the draft is not recomputed before finalization')
  clock.set(new Date('2026-11-01T02:01:00Z'))
  await finalizeDueInvoices(p.ctx, { tenantId: t.tenantId, beforeFinalize: recomputeLateUsage(p.ctx) })
  // API 170 x 0.10 = 17.00; Bundles 3.00; fee 20.00; Storage 80.00: 120.00
  const october = await invoiceOf(sub.id)
  assert.deepEqual([october.invoice_status, october.total, october.lines[0]], ['FINALIZED', '120.00', ['API', '170', '17.00']])

  // After the finalization: counted in the usage API; the finalized invoice never changes.
  clock.set(new Date('2026-11-01T04:00:00Z'))
  await send(t.api, api.id, [['late', 'api', 5, '2026-10-31T23:45:00Z'], ['late', 'gb', 30, '2026-10-31T23:45:00Z']], 175)
  await counted(t.api, gb.id, 110)
  await finalizeDueInvoices(p.ctx, { tenantId: t.tenantId, beforeFinalize: recomputeLateUsage(p.ctx) })
  assert.deepEqual(await invoiceOf(sub.id).then((i) => [i.invoice_status, i.total, i.invoice_number]), ['FINALIZED', '120.00', october.invoice_number])

  // December 1: the next cycle invoice carries the difference as adjustment lines. A batch killed
  // before its commit, then the rerun of the same run: billed once.
  clock.set(new Date('2026-12-01T00:00:30Z'))
  await eventually(async () => ((await watermark.watermarkMs()) >= clock.now().getTime() ? true : undefined), 'the watermark passed December 1')
  const runId = `late-run-${t.tenantId}`
  await assert.rejects(runBilling(ctx, { tenantId: t.tenantId, runId, hooks: { beforeCommit: () => { throw new Error('killed inside the batch') } } }), /killed inside/)
  assert.equal(await invoiceOf(sub.id, 'SUBSCRIPTION_CYCLE', '2026-11-01T00:00:00Z'), undefined)
  assert.deepEqual(await runBilling(ctx, { tenantId: t.tenantId, runId }).then((r) => [r.subscriptions, r.invoices]), [1, 1])
  assert.deepEqual(await billDueSubscriptions(ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
  // October now: API 175 x 0.10 = 17.50, billed 17.00: +0.50; Bundles ceil(175 / 500) = 1, 3.00 as billed: +5 units, 0.00;
  // Storage 110 in the volume tier above 100: 110 x 0.50 + 10.00 = 65.00, billed 80.00: -15.00.
  // November: no usage, December's fee 20.00. Total 20.00 + 0.50 - 15.00 = 5.50.
  const adj = (name: string) => `${name} (late usage 2026-10-01 to 2026-11-01)`
  const december = await invoiceOf(sub.id, 'SUBSCRIPTION_CYCLE', '2026-11-01T00:00:00Z')
  assert.deepEqual([december.invoice_status, december.subtotal, december.total, december.lines], ['DRAFT', '5.50', '5.50', [
    ['API', '0', '0.00'], [adj('API'), '5', '0.50'], ['Bundles', '0', '0.00'], [adj('Bundles'), '5', '0.00'], ['Fee', '1', '20.00'],
    ['Storage', '0', '0.00'], [adj('Storage'), '30', '-15.00'],
  ]])

  // More late October usage, and November usage acknowledged after November ended: the December
  // draft is recomputed at its finalization and keeps its adjustment lines.
  clock.set(new Date('2026-12-01T01:00:00Z'))
  await send(t.api, api.id, [['late', 'api', 10, '2026-10-20T00:00:00Z'], ['late', 'api', 100, '2026-11-15T00:00:00Z']], 285)
  clock.set(new Date('2026-12-01T02:01:00Z'))
  await finalizeDueInvoices(p.ctx, { tenantId: t.tenantId, beforeFinalize: recomputeLateUsage(p.ctx) })
  // November API 100 x 0.10 = 10.00, Bundles 3.00, fee 20.00, adjustments 0.50 + 0.00 - 15.00: 18.50
  const decemberFinal = await invoiceOf(sub.id, 'SUBSCRIPTION_CYCLE', '2026-11-01T00:00:00Z')
  assert.deepEqual([decemberFinal.invoice_status, decemberFinal.total, decemberFinal.lines.filter((l: string[]) => l[0].includes('late')).length], ['FINALIZED', '18.50', 3])

  // January 1: only what is new. October API 185 x 0.10 = 18.50, billed 17.00 + 0.50: +1.00; Bundles +10 units, 0.00;
  // Storage unchanged (no line); November as billed (no line). Fee 20.00: 21.00.
  clock.set(new Date('2027-01-01T00:00:30Z'))
  await eventually(async () => ((await billDueSubscriptions(ctx, { tenantId: t.tenantId })).invoices === 1 ? true : undefined), 'January billed')
  const january = await invoiceOf(sub.id, 'SUBSCRIPTION_CYCLE', '2026-12-01T00:00:00Z')
  assert.deepEqual([january.total, january.lines], ['21.00', [
    ['API', '0', '0.00'], [adj('API'), '10', '1.00'], ['Bundles', '0', '0.00'], [adj('Bundles'), '10', '0.00'], ['Fee', '1', '20.00'], ['Storage', '0', '0.00'],
  ]])
  // a second January run bills nothing
  assert.deepEqual(await billDueSubscriptions(ctx, { tenantId: t.tenantId }), { subscriptions: 0, invoices: 0 })
  await watermark.close()
})

test('late usage of a SKIPPED period: adjusted on the next invoice, and the skipped invoice can no longer be recomputed', async () => {
  const { t, api } = await tenantWithPlan()
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Usage only', prices: [{ ...usd, type: 'USAGE', meter_id: api.id, invoice_cadence: 'ARREAR', display_name: 'API', billing_model: 'FLAT_FEE', amount: '0.10' }],
  }))
  await created(t.api.post('/v1/customers', { external_id: 'quiet' }))
  const sub = await created(t.api.post('/v1/subscriptions', { plan_id: plan.id, currency: 'USD', start_date: OCT.toISOString(), external_customer_id: 'quiet' }))
  const ctx = { ...p.ctx, ingestWatermark: noWatermark(clock) }
  // no usage in October: the cycle invoice is zero, SKIPPED (closed: never finalized)
  clock.set(new Date('2026-11-01T00:00:30Z'))
  assert.deepEqual(await billDueSubscriptions(ctx, { tenantId: t.tenantId }), { subscriptions: 1, invoices: 1 })
  const october = await invoiceOf(sub.id)
  assert.deepEqual([october.invoice_status, october.total], ['SKIPPED', '0.00'])
  // 40 calls dated October 20, acknowledged November 5; 7 in November, in time
  clock.set(new Date('2026-11-05T00:00:00Z'))
  await send(t.api, api.id, [['quiet', 'api', 40, '2026-10-20T00:00:00Z']], 40)
  clock.set(new Date('2026-11-10T00:00:00Z'))
  await send(t.api, api.id, [['quiet', 'api', 7, '2026-11-10T00:00:00Z']], 47)
  clock.set(new Date('2026-12-01T00:00:30Z'))
  assert.deepEqual(await billDueSubscriptions(ctx, { tenantId: t.tenantId }), { subscriptions: 1, invoices: 1 })
  // November: 7 x 0.10 = 0.70; October's 40 x 0.10 = 4.00 as an adjustment
  const november = await invoiceOf(sub.id, 'SUBSCRIPTION_CYCLE', '2026-11-01T00:00:00Z')
  assert.deepEqual([november.invoice_status, november.total, november.lines], ['DRAFT', '4.70', [
    ['API', '7', '0.70'], ['API (late usage 2026-10-01 to 2026-11-01)', '40', '4.00'],
  ]])
  // recomputing October now would bill the 40 calls a second time
  const refused = await t.api.post(`/v1/invoices/${october.id}/compute?sync=true`, {})
  assert.equal(refused.status, 400)
  assert.equal(refused.body.code, 'invalid_operation')
  assert.equal(refused.body.http_status_code, 400)
  assert.match(refused.body.message, new RegExp(`billed as adjustments on invoice ${november.id}`))
  assert.deepEqual(await invoiceOf(sub.id).then((i) => [i.invoice_status, i.total]), ['SKIPPED', '0.00'])

  // January: October and November are closed and nothing was acknowledged late since December 1,
  // so neither is priced again (usage that arrived in time is never read twice): no usage read
  // goes through the context's reader, which only the late-usage recomputation uses.
  clock.set(new Date('2026-12-01T02:01:00Z'))
  await finalizeDueInvoices(p.ctx, { tenantId: t.tenantId, beforeFinalize: recomputeLateUsage(p.ctx) })
  let recomputeReads = 0
  const direct = clickhouseUsage(p.ctx.ch)
  const counting = { ...ctx, usage: (q: Parameters<typeof direct>[0]) => { recomputeReads++; return direct(q) } }
  clock.set(new Date('2027-01-01T00:00:30Z'))
  assert.deepEqual(await billDueSubscriptions(counting, { tenantId: t.tenantId }), { subscriptions: 1, invoices: 1 })
  assert.equal(recomputeReads, 0)
  assert.deepEqual(await invoiceOf(sub.id, 'SUBSCRIPTION_CYCLE', '2026-12-01T00:00:00Z').then((i) => [i.invoice_status, i.total, i.lines.length]), ['SKIPPED', '0.00', 1])
})
