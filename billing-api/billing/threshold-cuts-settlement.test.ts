// After automatic threshold invoices, the cycle invoice settles commitments and tiered prices
// over the WHOLE period's usage, minus what the threshold invoices billed for the line, so the
// threshold invoices + the cycle invoice bill exactly what one cycle invoice without cuts would
// (subscriptions/usage-cuts.ts). Each test runs two identical subscriptions side by side, one
// with a threshold and one without, fed the same usage through ingest -> Kafka -> aggregator ->
// ClickHouse. Plus a calendar stub period, whose commitments are prorated by the period's share.
// Plan (USD, monthly, ARREAR): Platform 10.00 FIXED; API 0.10 per call (SUM of n); Storage
// TIERED VOLUME per GB (SUM of gb): up to 10 GB 2.00 each, above 10 GB every GB at 1.00.
import {  test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, usePlatform, sqlOn } from '../../test/support/platform.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { JOBS } from '../../scheduler/jobs.js'
import { billDueSubscriptions } from './bill-due.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

const sql = sqlOn(p)

async function setup() {
  const t = await p.newTenant()
  const api = await created(t.api.post('/v1/meters', { name: 'api', event_name: 'api', aggregation: { type: 'SUM', field: 'n' } }))
  const storage = await created(t.api.post('/v1/meters', { name: 'storage', event_name: 'storage', aggregation: { type: 'SUM', field: 'gb' } }))
  const usd = { currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Pro',
    prices: [
      { ...usd, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '10', display_name: 'Platform' },
      { ...usd, type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.1', meter_id: api.id, display_name: 'API' },
      {
        ...usd, type: 'USAGE', billing_model: 'TIERED', tier_mode: 'VOLUME', meter_id: storage.id, display_name: 'Storage',
        tiers: [{ up_to: 10, unit_amount: '2' }, { up_to: null, unit_amount: '1' }],
      },
    ],
  }))
  const priceId = (name: string) => plan.prices.find((x: any) => x.display_name === name).id as string
  const subscribe = async (externalId: string, extra: Record<string, unknown>) => {
    await created(t.api.post('/v1/customers', { external_id: externalId }))
    return created(t.api.post('/v1/subscriptions', { external_customer_id: externalId, plan_id: plan.id, currency: 'USD', start_date: '2026-10-01T00:00:00Z', ...extra }))
  }
  const counted = (meterId: string, customer: string, value: string) =>
    eventually(async () => ((await usage(t.api, meterId, { external_customer_id: customer })).value === value ? true : undefined), `${value} on ${customer}`)
  return { t, api, storage, priceId, subscribe, counted }
}

type Setup = Awaited<ReturnType<typeof setup>>

/** The same October usage for each customer: 200 calls + 6 GB on Oct 5 (before the cut), 100 calls + 8 GB on Oct 15 (after it). */
async function octoberUsage(s: Setup, customers: string[], phase: 'before' | 'after') {
  const [ts, n, gb] = phase === 'before' ? ['2026-10-05T00:00:00Z', 200, 6] : ['2026-10-15T00:00:00Z', 100, 8]
  await ingestAll(s.t.api, customers.flatMap((c) => [
    { event_id: `${c}-api-${phase}`, event_name: 'api', external_customer_id: c, timestamp: ts, properties: { n } },
    { event_id: `${c}-gb-${phase}`, event_name: 'storage', external_customer_id: c, timestamp: ts, properties: { gb } },
  ]))
  for (const c of customers) {
    await s.counted(s.api.id, c, String(phase === 'before' ? 200 : 300))
    await s.counted(s.storage.id, c, String(phase === 'before' ? 6 : 14))
  }
}

async function invoicesOf(subscriptionId: string) {
  const invoices = await sql(
    `SELECT id, billing_reason, total::text FROM invoices WHERE subscription_id = ? AND invoice_status <> 'VOIDED' ORDER BY period_end, created_at`, [subscriptionId])
  for (const inv of invoices) {
    const rows = await sql(`SELECT display_name, quantity::text, amount::text, commitment_info FROM invoice_line_items WHERE invoice_id = ? ORDER BY display_name`, [inv.id])
    inv.lines = Object.fromEntries(rows.map((l: any) => [l.display_name, [l.quantity, l.amount]]))
    inv.info = Object.fromEntries(rows.filter((l: any) => l.commitment_info).map((l: any) => [l.display_name, l.commitment_info]))
    delete inv.id
  }
  return invoices
}

const sum = (invoices: any[]) => invoices.reduce((s, i) => s + Math.round(Number(i.total) * 100), 0) / 100

async function runOctober(s: Setup, cut: { id: string }, whole: { id: string }) {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  await octoberUsage(s, ['cut', 'whole'], 'before')
  // Oct 10: 200 x 0.10 + 6 GB x 2.00 (volume, first tier) = 32.00 >= 30.00: only the threshold subscription is invoiced.
  clock.set(new Date('2026-10-10T00:00:00Z'))
  assert.equal(await JOBS['auto-invoice-threshold'].run(p.ctx, { tenant_id: s.t.tenantId }), 1)
  await octoberUsage(s, ['cut', 'whole'], 'after')
  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: s.t.tenantId })).invoices, 2)
  return { cut: await invoicesOf(cut.id), whole: await invoicesOf(whole.id) }
}

test('line commitment with true-up and a volume-tiered line: threshold + cycle invoices = one uncut cycle invoice', async () => {
  const s = await setup()
  const lines = {
    override_line_items: [{ price_id: s.priceId('API'), commitment_amount: '50', commitment_overage_factor: '1.5', commitment_true_up_enabled: true }],
  }
  const cut = await s.subscribe('cut', { ...lines, auto_invoice_threshold: '30.00' })
  const whole = await s.subscribe('whole', lines)
  const inv = await runOctober(s, cut, whole)

  // Uncut: API 300 calls x 0.10 = 30.00 utilized + true-up 50 - 30 = 20.00 -> 50.00; Storage 14 GB
  // reaches the second volume tier: 14 x 1.00 = 14.00; Platform 10.00 -> 74.00.
  assert.deepEqual(inv.whole.map((i: any) => [i.billing_reason, i.total, i.lines]), [
    ['SUBSCRIPTION_CYCLE', '74.00', { API: ['300', '50.00'], Platform: ['1', '10.00'], Storage: ['14', '14.00'] }],
  ])
  // Threshold (Oct 1 - Oct 10, no commitment): 200 x 0.10 = 20.00; 6 GB x 2.00 = 12.00 -> 32.00.
  // Cycle: API whole period 50.00 - 20.00 already billed = 30.00 (not 10.00 + 40.00 true-up on the
  // post-cut usage alone); Storage 14.00 - 12.00 = 2.00 (not 8 GB x 2.00 = 16.00); Platform 10.00 -> 42.00.
  assert.deepEqual(inv.cut.map((i: any) => [i.billing_reason, i.total, i.lines]), [
    ['AUTO_INVOICE_THRESHOLD', '32.00', { API: ['200', '20.00'], Storage: ['6', '12.00'] }],
    ['SUBSCRIPTION_CYCLE', '42.00', { API: ['300', '30.00'], Platform: ['1', '10.00'], Storage: ['14', '2.00'] }],
  ])
  assert.equal(sum(inv.cut), 74)
  assert.equal(sum(inv.cut), sum(inv.whole))
  // commitment_info describes the whole period's settlement on both cycle invoices.
  const info = {
    amount: '50.00', quantity: null, overage_factor: '1.5', computed_commitment_utilized_amount: '30.00',
    computed_overage_amount: '0.00', computed_true_up_amount: '20.00', is_windowed: false, true_up_enabled: true,
  }
  assert.deepEqual(inv.cut[1].info.API, info)
  assert.deepEqual(inv.whole[0].info.API, info)
})

test('subscription (shared) commitment with overage: threshold + cycle invoices = one uncut cycle invoice', async () => {
  const s = await setup()
  const shared = { commitment_amount: '25', overage_factor: '2', enable_true_up: true }
  const cut = await s.subscribe('cut', { ...shared, auto_invoice_threshold: '30.00' })
  const whole = await s.subscribe('whole', shared)
  const inv = await runOctober(s, cut, whole)

  // The shared commitment is consumed in line order (line items by created_at, then id: the
  // plan's lines are created together, so either usage line may come first). Totals do not depend on it:
  // usage 30.00 + 14.00 = 44.00 -> 25.00 utilized + (44.00 - 25.00) x 2 = 38.00 overage = 63.00.
  // API first: API 25.00 + (30.00 - 25.00) x 2 = 35.00, Storage 14.00 x 2 = 28.00.
  // Storage first: Storage 14.00 utilized, API 11.00 + (30.00 - 11.00) x 2 = 49.00.
  const apiFirst = inv.whole[0].info.API.computed_commitment_utilized_amount === '25.00'
  const [api, storage] = apiFirst ? ['35.00', '28.00'] : ['49.00', '14.00']
  assert.deepEqual(inv.whole.map((i: any) => [i.billing_reason, i.total, i.lines]), [
    ['SUBSCRIPTION_CYCLE', '73.00', { API: ['300', api], Platform: ['1', '10.00'], Storage: ['14', storage] }],
  ])
  // Threshold 32.00 as above. Cycle (same line order: both plans' lines): API minus 20.00 already
  // billed (15.00 or 29.00), Storage minus 12.00 (16.00 or 2.00), Platform 10.00 -> 41.00 either way;
  // 32.00 + 41.00 = 73.00.
  const cutApiFirst = inv.cut[1].info.API.computed_commitment_utilized_amount === '25.00'
  const [cutApi, cutStorage] = cutApiFirst ? ['15.00', '16.00'] : ['29.00', '2.00']
  assert.deepEqual(inv.cut.map((i: any) => [i.billing_reason, i.total, i.lines]), [
    ['AUTO_INVOICE_THRESHOLD', '32.00', { API: ['200', '20.00'], Storage: ['6', '12.00'] }],
    ['SUBSCRIPTION_CYCLE', '41.00', { API: ['300', cutApi], Platform: ['1', '10.00'], Storage: ['14', cutStorage] }],
  ])
  assert.equal(sum(inv.cut), sum(inv.whole))
  assert.deepEqual(
    [inv.cut[1].info.API.computed_overage_amount, inv.cut[1].info.Storage.computed_overage_amount],
    cutApiFirst ? ['10.00', '28.00'] : ['38.00', '0.00'],
  )
})

test('a voided threshold invoice does not count: the cycle bills the whole period with nothing subtracted', async () => {
  const s = await setup()
  const lines = { override_line_items: [{ price_id: s.priceId('API'), commitment_amount: '50', commitment_true_up_enabled: true }] }
  const cut = await s.subscribe('cut', { ...lines, auto_invoice_threshold: '30.00' })
  const whole = await s.subscribe('whole', lines)
  clock.set(new Date('2026-10-01T00:00:00Z'))
  await octoberUsage(s, ['cut', 'whole'], 'before')
  clock.set(new Date('2026-10-10T00:00:00Z'))
  assert.equal(await JOBS['auto-invoice-threshold'].run(p.ctx, { tenant_id: s.t.tenantId }), 1)
  await sql(`UPDATE invoices SET invoice_status = 'VOIDED' WHERE subscription_id = ? AND billing_reason = 'AUTO_INVOICE_THRESHOLD'`, [cut.id])
  await octoberUsage(s, ['cut', 'whole'], 'after')
  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: s.t.tenantId })).invoices, 2)
  // 50.00 (API, committed) + 14.00 (Storage) + 10.00 = 74.00 on both.
  for (const id of [cut.id, whole.id]) {
    assert.deepEqual((await invoicesOf(id)).map((i: any) => [i.billing_reason, i.total, i.lines]), [
      ['SUBSCRIPTION_CYCLE', '74.00', { API: ['300', '50.00'], Platform: ['1', '10.00'], Storage: ['14', '14.00'] }],
    ])
  }
})

test('calendar stub period: commitments prorated by the period share, windowed ones per clipped window', async () => {
  const s = await setup()
  clock.set(new Date('2026-10-16T12:00:00Z'))
  // [Oct 16 12:00, Nov 1) = 15.5 of October's 31 days: share 0.5.
  const sub = await s.subscribe('stub', {
    start_date: '2026-10-16T12:00:00Z', billing_cycle: 'calendar',
    override_line_items: [
      { price_id: s.priceId('API'), commitment_amount: '31', commitment_true_up_enabled: true },
      { price_id: s.priceId('Storage'), commitment_amount: '1', commitment_true_up_enabled: true, commitment_windowed: true },
    ],
  })
  await ingestAll(s.t.api, [
    { event_id: 'stub-api', event_name: 'api', external_customer_id: 'stub', timestamp: '2026-10-18T00:00:00Z', properties: { n: 50 } },
    { event_id: 'stub-gb', event_name: 'storage', external_customer_id: 'stub', timestamp: '2026-10-20T00:00:00Z', properties: { gb: 2 } },
  ])
  await s.counted(s.api.id, 'stub', '50')
  await s.counted(s.storage.id, 'stub', '2')
  clock.set(new Date('2026-11-01T00:00:00Z'))
  assert.equal((await billDueSubscriptions(p.ctx, { tenantId: s.t.tenantId })).invoices, 1)
  const [inv] = await invoicesOf(sub.id)
  // Platform: 10.00 x 0.5 = 5.00. API: commitment 31.00 x 0.5 = 15.50; 50 x 0.10 = 5.00 utilized,
  // true-up 10.50 -> 15.50. Storage, 1.00 per day window: Oct 16 is cut to 12 of 24 hours (0.50
  // committed), Oct 17..31 are 15 whole days. Oct 20: 2 GB x 2.00 = 4.00 -> 1.00 utilized + 3.00
  // overage; true-up 0.50 (Oct 16) + 14 x 1.00 (other whole days) = 14.50 -> 18.50. Total 39.00.
  assert.deepEqual([inv.billing_reason, inv.total, inv.lines], [
    'SUBSCRIPTION_CYCLE', '39.00', { API: ['50', '15.50'], Platform: ['1', '5.00'], Storage: ['2', '18.50'] },
  ])
  assert.deepEqual([inv.info.API.amount, inv.info.API.computed_true_up_amount], ['15.50', '10.50'])
  assert.deepEqual(
    [inv.info.Storage.computed_commitment_utilized_amount, inv.info.Storage.computed_overage_amount, inv.info.Storage.computed_true_up_amount],
    ['1.00', '3.00', '14.50'],
  )
})
