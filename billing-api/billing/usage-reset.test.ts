// reset_usage, rounding and bucket_size where billing reads usage: a meter that never resets
// bills its cumulative usage since the line item started; a rounded meter prices the rounded
// quantity; commitment time buckets follow the meter's bucket size. Usage goes through
// ingest -> Kafka -> aggregator -> ClickHouse.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { eventually, sqlOn, usePlatform } from '../../test/support/platform.js'
import { assertError } from '../../test/support/assertions.js'
import { billDueSubscriptions } from './bill-due.js'
import { usageStart } from './usage-reset.js'
import type { Charge } from './charges.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })
const sql = sqlOn(p)

test('usageStart: the charge window for BILLING_PERIOD, the line item start for NEVER', () => {
  const c = { periodStart: new Date('2026-11-01T00:00:00Z'), lineItem: { start_date: new Date('2026-10-05T00:00:00Z') } } as Pick<Charge, 'periodStart' | 'lineItem'>
  assert.equal(usageStart({ reset_usage: 'BILLING_PERIOD' }, c).toISOString(), '2026-11-01T00:00:00.000Z')
  assert.equal(usageStart({ reset_usage: 'NEVER' }, c).toISOString(), '2026-10-05T00:00:00.000Z')
})

test('NEVER bills cumulative usage, BILLING_PERIOD the period; rounding prices the rounded quantity', async () => {
  const t = await p.newTenant()
  const meter = (name: string, extra: object) => created(t.api.post('/v1/meters', { name, event_name: 'gb', aggregation: { type: 'SUM', field: 'gb' }, ...extra }))
  const periodic = await meter('Periodic', { reset_usage: 'BILLING_PERIOD' })
  const cumulative = await meter('Cumulative', { reset_usage: 'NEVER' })
  const rounded = await meter('Rounded', { rounding: { mode: 'UP', precision: 0 } })
  const weighted = await created(t.api.post('/v1/meters', { name: 'Weighted', event_name: 'gb', aggregation: { type: 'WEIGHTED_SUM', field: 'gb' } }))
  const usd = { currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.1' }
  const plan = await created(t.api.post('/v1/plans', {
    name: 'Storage',
    prices: [
      { ...usd, meter_id: periodic.id, display_name: 'Periodic' },
      { ...usd, meter_id: cumulative.id, display_name: 'Cumulative' },
      { ...usd, meter_id: rounded.id, display_name: 'Rounded' },
      { ...usd, meter_id: weighted.id, display_name: 'Weighted' },
    ],
  }))
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'acme', plan_id: plan.id, currency: 'USD', start_date: '2026-10-01T00:00:00Z' }))
  const ev = (id: string, ts: string, gb: string) => ({ event_id: id, event_name: 'gb', external_customer_id: 'acme', timestamp: ts, properties: { gb } })
  const invoiceLines = async (periodStart: string) => {
    const [row] = await sql(`SELECT id FROM invoices WHERE subscription_id = ? AND period_start = ?`, [sub.id, periodStart])
    const inv = (await t.api.get(`/v1/invoices/${row.id}`)).body
    return Object.fromEntries(inv.line_items.map((l: any) => [l.display_name, [l.quantity, l.amount]]))
  }

  clock.set(new Date('2026-10-20T00:00:00Z'))
  await ingestAll(t.api, [ev('o1', '2026-10-10T00:00:00Z', '100.2')])
  await eventually(async () => ((await usage(t.api, rounded.id, {})).event_count === 1 ? true : undefined), 'October in ClickHouse')
  clock.set(new Date('2026-11-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  // October: 100.2 GB for all three; rounded UP to 101. x 0.10 -> 10.02, 10.02, 10.10.
  // Time-weighted: 100.2 GB held 22 of October's 31 days: 2204.4 / 31 = 71.109677419355 -> 7.11
  assert.deepEqual(await invoiceLines('2026-10-01T00:00:00Z'), {
    Periodic: ['100.2', '10.02'], Cumulative: ['100.2', '10.02'], Rounded: ['101', '10.10'], Weighted: ['71.109677419355', '7.11'],
  })

  clock.set(new Date('2026-11-20T00:00:00Z'))
  await ingestAll(t.api, [ev('n1', '2026-11-10T00:00:00Z', '50.5')])
  await eventually(async () => ((await usage(t.api, rounded.id, {})).event_count === 2 ? true : undefined), 'November in ClickHouse')
  clock.set(new Date('2026-12-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  // November: periodic 50.5 (5.05); cumulative since Oct 1: 100.2 + 50.5 = 150.7 (15.07);
  // rounded 50.5 -> 51 (5.10); time-weighted: 100.2 carried in for 9 days, then 50.5 for 21:
  // (901.8 + 1060.5) / 30 = 65.41 (6.54).
  assert.deepEqual(await invoiceLines('2026-11-01T00:00:00Z'), {
    Periodic: ['50.5', '5.05'], Cumulative: ['150.7', '15.07'], Rounded: ['51', '5.10'], Weighted: ['65.41', '6.54'],
  })
})

test("commitment time buckets follow the meter's bucket size: minutes only on a MINUTE meter", async () => {
  clock.set(new Date('2026-10-01T00:00:00Z'))
  const t = await p.newTenant()
  const hourly = await created(t.api.post('/v1/meters', { name: 'Hourly', event_name: 'h', aggregation: { type: 'COUNT' } }))
  const minutely = await created(t.api.post('/v1/meters', { name: 'Minutely', event_name: 'm', aggregation: { type: 'COUNT' }, bucket_size: 'MINUTE' }))
  assert.equal(minutely.bucket_size, 'MINUTE')
  const usd = { currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', type: 'USAGE', billing_model: 'FLAT_FEE', amount: '1' }
  const plan = await created(t.api.post('/v1/plans', {
    name: 'P', prices: [{ ...usd, meter_id: hourly.id, display_name: 'Hourly' }, { ...usd, meter_id: minutely.id, display_name: 'Minutely' }],
  }))
  const priceId = (name: string) => plan.prices.find((x: any) => x.display_name === name).id as string
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const halves = [{ start: { hour: 0, minute: 0 }, end: { hour: 9, minute: 30 } }, { start: { hour: 9, minute: 30 }, end: { hour: 24, minute: 0 } }]
  const subscribe = (price: string) => t.api.post('/v1/subscriptions', {
    external_customer_id: 'acme', plan_id: plan.id, currency: 'USD',
    override_line_items: [{ price_id: priceId(price), commitment_amount: '10', commitment_windowed: true, commitment_time_buckets: halves }],
  })
  assertError(await subscribe('Hourly'), 400, 'validation_error', /end 09:30 is not on the hour; the meter's buckets are hours/)
  const ok = await subscribe('Minutely')
  assert.equal(ok.status, 201, JSON.stringify(ok.body))
})
