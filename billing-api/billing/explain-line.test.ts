// The explain trail of a usage line, on a hand-computed SLAB-tiered example whose events went
// through ingest -> Kafka -> aggregator -> ClickHouse; plus the pure steps and cursor.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { assertError } from '../../test/support/assertions.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { eventually, usePlatform } from '../../test/support/platform.js'
import type { Price } from '../plans/price.entity.js'
import { billDueSubscriptions } from './bill-due.js'
import { decodeCursor, encodeCursor, pricingSteps } from './explain-steps.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

const TIERS = [{ up_to: 100, unit_amount: '0.10' }, { up_to: 1000, unit_amount: '0.05' }, { up_to: null, unit_amount: '0.01' }]

test('pricingSteps: slab tiers with their quantities and amounts, and proration; the cursor round-trips', () => {
  const price = { type: 'USAGE', billing_model: 'TIERED', tier_mode: 'SLAB', currency: 'USD', amount: '0', tiers: TIERS, transform_quantity: null, min_quantity: null } as unknown as Price
  // 1250 units: 100 x 0.10 = 10.00, 900 x 0.05 = 45.00, 250 x 0.01 = 2.50 -> 57.50
  const s = pricingSteps(price, { quantity: '1250', commitment_info: null, amount: '57.5' }, 'USD')
  assert.deepEqual(s.steps.map((x) => [x.tier, x.from, x.to, x.quantity, x.unit_amount, x.amount]), [
    [0, '0', '100', '100', '0.1', '10'], [1, '100', '1000', '900', '0.05', '45'], [2, '1000', null, '250', '0.01', '2.5'],
  ])
  assert.deepEqual([s.billed_quantity, s.unrounded, s.amount, s.proration], ['1250', '57.5', '57.50', null])
  const half = pricingSteps(price, { quantity: '1250', share: { seconds: 1_339_200, of: 2_678_400 }, commitment_info: null, amount: '28.75' }, 'USD')
  assert.deepEqual(half.proration, { seconds: 1_339_200, of: 2_678_400 })
  assert.deepEqual(decodeCursor(encodeCursor({ timestampMs: 1_791_000_000_123, eventId: 'e,"1' })), { timestampMs: 1_791_000_000_123, eventId: 'e,"1' })
  assert.throws(() => decodeCursor('bm9wZQ'), /events_cursor/)
})

test('explain: meter, period, day buckets, tier steps equal to the line amount, raw events page by page; tenancy', async () => {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'Units', event_name: 'job', aggregation: { type: 'SUM', field: 'units' } }))
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Tiered',
    prices: [
      { type: 'USAGE', billing_model: 'TIERED', tier_mode: 'SLAB', tiers: TIERS, meter_id: meter.id, currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Units' },
      { type: 'FIXED', billing_model: 'FLAT_FEE', amount: '5', currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Base' },
    ],
  }))
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'acme', plan_id: plan.id, currency: 'USD', start_date: '2026-10-01T00:00:00Z' }))
  const ev = (id: string, units: number, ts: string, customer = 'acme') => ({ event_id: id, event_name: 'job', external_customer_id: customer, timestamp: ts, properties: { units } })
  await ingestAll(t.api, [
    ev('e1', 60, '2026-10-03T08:00:00Z'), ev('e2', 90, '2026-10-03T09:30:15.250Z'), ev('e3', 800, '2026-10-10T12:00:00Z'), ev('e4', 300, '2026-10-20T23:59:59.999Z'),
    ev('x1', 5000, '2026-10-05T00:00:00Z', 'someone-else'), // another customer
    ev('x2', 7000, '2026-11-01T00:00:00Z'), // the next period
  ])
  await eventually(async () => ((await usage(t.api, meter.id, {})).value === '13250' ? true : undefined), 'all events in ClickHouse')
  clock.set(new Date('2026-11-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const [listed] = (await t.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.items
  const inv = (await t.api.get(`/v1/invoices/${listed.id}`)).body
  const line = inv.line_items.find((l: any) => l.display_name === 'Units')
  // 60 + 90 + 800 + 300 = 1250 units: 10.00 + 45.00 + 2.50 = 57.50
  assert.deepEqual([line.quantity, line.amount], ['1250', '57.50'])

  const res = await t.api.get(`/v1/invoices/${inv.id}/lines/${line.id}/explain?events_limit=3`)
  assert.equal(res.status, 200, JSON.stringify(res.body))
  const x = res.body
  assert.deepEqual(x.meter, { id: meter.id, name: 'Units', event_name: 'job', aggregation: meter.aggregation })
  assert.deepEqual(x.period, { start: '2026-10-01T00:00:00.000Z', end: '2026-11-01T00:00:00.000Z' })
  assert.deepEqual(x.external_customer_ids, ['acme'])
  assert.deepEqual([x.quantity.measured, x.quantity.event_count, x.quantity.line_quantity, x.quantity.priced_quantity], ['1250', 4, '1250', '1250'])
  assert.deepEqual(x.quantity.buckets.map((b: any) => [b.window_start, b.value, b.event_count]), [
    ['2026-10-03T00:00:00.000Z', '150', 2], ['2026-10-10T00:00:00.000Z', '800', 1], ['2026-10-20T00:00:00.000Z', '300', 1],
  ])
  assert.deepEqual(x.pricing.steps.map((s: any) => [s.from, s.to, s.quantity, s.unit_amount, s.amount]), [
    ['0', '100', '100', '0.1', '10'], ['100', '1000', '900', '0.05', '45'], ['1000', null, '250', '0.01', '2.5'],
  ])
  assert.deepEqual([x.pricing.billing_model, x.pricing.tier_mode, x.pricing.recomputed, x.pricing.proration], ['TIERED', 'SLAB', true, null])
  assert.deepEqual([x.amount, x.explained_amount, x.amount_matches], ['57.50', '57.50', true])
  assert.deepEqual([x.discounts.line_item_discount, x.discounts.invoice_level_discount, x.discounts.coupon_applications], ['0.00', '0.00', []])
  assert.deepEqual(x.events.items.map((e: any) => [e.event_id, e.timestamp, e.value]), [
    ['e1', '2026-10-03T08:00:00.000Z', '60'], ['e2', '2026-10-03T09:30:15.250Z', '90'], ['e3', '2026-10-10T12:00:00.000Z', '800'],
  ])
  assert.ok(x.events.next_cursor)
  const next = (await t.api.get(`/v1/invoices/${inv.id}/lines/${line.id}/explain?events_limit=3&events_cursor=${x.events.next_cursor}&window_size=MINUTE`)).body
  assert.deepEqual(next.events.items.map((e: any) => e.event_id), ['e4'])
  assert.equal(next.events.next_cursor, null)
  assert.equal(next.quantity.buckets.length, 4)

  // Late events change what the meter measures now, not the stored line: the trail says so.
  await ingestAll(t.api, [ev('e5', 50, '2026-10-25T00:00:00Z')])
  await eventually(async () => ((await usage(t.api, meter.id, {})).value === '13300' ? true : undefined), 'the late event')
  const late = (await t.api.get(`/v1/invoices/${inv.id}/lines/${line.id}/explain`)).body
  // 1300 units: 10.00 + 45.00 + 300 x 0.01 = 58.00
  assert.deepEqual([late.quantity.measured, late.explained_amount, late.amount, late.amount_matches], ['1300', '58.00', '57.50', false])

  const base = inv.line_items.find((l: any) => l.display_name === 'Base')
  assertError(await t.api.get(`/v1/invoices/${inv.id}/lines/${base.id}/explain`), 400, 'invalid_operation', /usage line/)
  assertError(await t.api.get(`/v1/invoices/${inv.id}/lines/line_missing/explain`), 404, 'not_found')
  assertError(await t.api.get(`/v1/invoices/${inv.id}/lines/${line.id}/explain?events_cursor=garbage`), 400, 'validation_error', /events_cursor/)
  assertError(await t.api.get(`/v1/invoices/${inv.id}/lines/${line.id}/explain?events_limit=0`), 400, 'validation_error')
  const stranger = await p.newTenant()
  assertError(await stranger.api.get(`/v1/invoices/${inv.id}/lines/${line.id}/explain`), 404, 'not_found')
})
