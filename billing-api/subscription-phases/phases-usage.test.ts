// Usage across a phase switch: each phase's usage price bills the usage of the part of the
// period its line item ran. Meter calls (COUNT). Basic: 0.01 per call; from Sep 16 (phase),
// Pro: 0.004 per call. September has 30 days.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { eventually, usePlatform } from '../../test/support/platform.js'
import { billDueSubscriptions } from '../billing/bill-due.js'
import { startDuePhases } from './phase-switch.js'

const clock = new ManualClock(new Date('2026-09-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

test('a usage price billed up to the switch, the phase\'s usage price from it', async () => {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const usd = { currency: 'USD', billing_period: 'MONTHLY', type: 'USAGE', billing_model: 'FLAT_FEE', meter_id: meter.id, invoice_cadence: 'ARREAR' }
  const basic = await created(t.api.post('/v1/plans', { name: 'Basic', prices: [{ ...usd, amount: '0.01', display_name: 'Calls (Basic)' }] }))
  const pro = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [{ ...usd, amount: '0.004', display_name: 'Calls (Pro)' }] }))
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'acme', plan_id: basic.id, currency: 'USD', start_date: '2026-09-01T00:00:00Z' }))

  clock.set(new Date('2026-09-10T00:00:00Z'))
  await created(t.api.post(`/v1/subscriptions/${sub.id}/phases`, { start_date: '2026-09-16T00:00:00Z', line_items: [{ price_id: pro.prices[0].id }] }))
  const call = (i: number, ts: string) => ({ event_id: `e${i}`, event_name: 'call', external_customer_id: 'acme', timestamp: ts, properties: {} })
  // 10 calls before Sep 16 (the last one second before), 25 from Sep 16 on
  await ingestAll(t.api, [
    ...Array.from({ length: 9 }, (_, i) => call(i, '2026-09-05T12:00:00Z')), call(9, '2026-09-15T23:59:59Z'),
    ...Array.from({ length: 25 }, (_, i) => call(100 + i, i === 0 ? '2026-09-16T00:00:00Z' : '2026-09-20T08:00:00Z')),
  ])
  clock.set(new Date('2026-09-16T00:00:30Z'))
  await eventually(async () => ((await usage(t.api, meter.id, { external_customer_id: 'acme', start_time: '2026-09-01T00:00:00Z', end_time: '2026-10-01T00:00:00Z' })).value === '35' ? true : undefined), '35 calls in ClickHouse')
  // usage prices are not prorated: the switch writes no invoice
  assert.deepEqual(await startDuePhases(p.ctx, { tenantId: t.tenantId }), { started: 1, invoices: 0 })

  clock.set(new Date('2026-10-01T00:01:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const cycle = (await t.api.post('/v1/invoices/search', { subscription_id: sub.id })).body.items.find((i: any) => i.billing_reason === 'SUBSCRIPTION_CYCLE')
  // Basic: 10 calls x 0.01 = 0.10 (Sep 1 - 16); Pro: 25 calls x 0.004 = 0.10 (Sep 16 - Oct 1)
  assert.deepEqual(cycle.line_items.map((l: any) => [l.display_name, l.quantity, l.amount, l.period_start.slice(5, 10), l.period_end.slice(5, 10)]).sort(), [
    ['Calls (Basic)', '10', '0.10', '09-01', '09-16'],
    ['Calls (Pro)', '25', '0.10', '09-16', '10-01'],
  ])
  assert.equal(cycle.total, '0.20')
})
