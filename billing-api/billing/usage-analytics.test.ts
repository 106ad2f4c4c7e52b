// usage_analytics and usage_breakdown: the pure apportionment (hand-computed remainders), and a
// usage invoice built from events that went through ingest -> Kafka -> aggregator -> ClickHouse.
import {  test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { eventually, usePlatform } from '../../test/support/platform.js'
import { billDueSubscriptions } from './bill-due.js'
import { D } from '../pricing/index.js'
import { apportionUsage, splitExactly } from './usage-apportion.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

const rows = (xs: [string, string, number][]) => xs.map(([key, usage, event_count]) => ({ key, usage, event_count }))
const view = (items: { key: string; usage: string; cost: string; percentage: string; event_count: number }[]) =>
  items.map((i) => [i.key, i.usage, i.cost, i.percentage, i.event_count])

test('apportionUsage: half-up shares, the remainder on the largest item, exact sums', () => {
  // 4.02 x 2005/4015 = 2.0075.. -> 2.01, 4.02 x 1005/4015 = 1.0062.. -> 1.01 (twice): 4.03, one
  // cent too many, taken from the largest (api): 2.00 + 1.01 + 1.01 = 4.02.
  // Percentages 49.938 -> 49.94, 25.031 -> 25.03 (twice): 100.00, nothing to move.
  assert.deepEqual(view(apportionUsage(rows([['web', '1005', 1], ['api', '2005', 2], ['sdk', '1005', 1]]), 'SUM', '4.02', 'USD', (k) => k)), [
    ['api', '2005', '2.00', '49.94', 2], ['sdk', '1005', '1.01', '25.03', 1], ['web', '1005', '1.01', '25.03', 1],
  ])
  // Three equal thirds of 10.00: 3.33 each = 9.99, the cent goes to the first by key; 33.33 x 3 + 0.01.
  assert.deepEqual(view(apportionUsage(rows([['b', '1', 1], ['a', '1', 1], ['c', '1', 1]]), 'COUNT', '10.00', 'USD', (k) => k)), [
    ['a', '1', '3.34', '33.34', 1], ['b', '1', '3.33', '33.33', 1], ['c', '1', '3.33', '33.33', 1],
  ])
  // MAX is not additive: shares by event_count (3 : 1) of 8.00 JPY -> 6 and 2.
  assert.deepEqual(view(apportionUsage(rows([['x', '100', 3], ['y', '500', 1]]), 'MAX', '8', 'JPY', (k) => k)), [
    ['x', '100', '6', '75.00', 3], ['y', '500', '2', '25.00', 1],
  ])
  // All-zero usage falls back to event counts; a zero line costs zero everywhere.
  assert.deepEqual(view(apportionUsage(rows([['x', '0', 1], ['y', '0', 1]]), 'SUM', '0.00', 'USD', (k) => k)), [
    ['x', '0', '0.00', '50.00', 1], ['y', '0', '0.00', '50.00', 1],
  ])
  assert.deepEqual(apportionUsage<string>([], 'SUM', '5.00', 'USD', (k) => k), [])
})

test('splitExactly never flips a part past zero when many shares round up', () => {
  // 0.50 over 100 equal weights: each 0.005 rounds up to 0.01 (1.00 in all), 0.50 too many.
  const parts = splitExactly(D('0.50'), Array.from({ length: 100 }, () => D(1)), 2)
  assert.equal(parts.reduce((a, x) => a.plus(x), D(0)).toFixed(2), '0.50')
  assert.ok(parts.every((x) => x.gte(0)))
  assert.equal(parts.filter((x) => x.isZero()).length, 50)
})

test('a usage line carries usage_analytics per source and usage_breakdown per meter group_by value, costs summing to the line', async () => {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'Tokens', event_name: 'llm', aggregation: { type: 'SUM', field: 'tokens', group_by: 'model' } }))
  const calls = await created(t.api.post('/v1/meters', { name: 'Calls', event_name: 'llm', aggregation: { type: 'COUNT' } }))
  const usd = { currency: 'USD', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR' }
  const plan = await created(t.api.post('/v1/plans', {
    name: 'AI',
    prices: [
      { ...usd, type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.001', meter_id: meter.id, display_name: 'Tokens' },
      { ...usd, type: 'USAGE', billing_model: 'FLAT_FEE', amount: '0.10', meter_id: calls.id, display_name: 'Calls' },
      { ...usd, type: 'FIXED', billing_model: 'FLAT_FEE', amount: '5', display_name: 'Base' },
    ],
  }))
  await created(t.api.post('/v1/customers', { external_id: 'acme' }))
  const sub = await created(t.api.post('/v1/subscriptions', { external_customer_id: 'acme', plan_id: plan.id, currency: 'USD', start_date: '2026-10-01T00:00:00Z' }))
  const ev = (id: string, source: string | undefined, tokens: number, model: string, ts = '2026-10-10T00:00:00Z', customer = 'acme') => ({
    event_id: id, event_name: 'llm', external_customer_id: customer, timestamp: ts, ...(source ? { source } : {}), properties: { tokens, model },
  })
  await ingestAll(t.api, [
    ev('e1', 'api', 2000, 'gpt'), ev('e2', 'api', 5, 'claude'), ev('e3', 'sdk', 1005, 'claude'), ev('e4', 'web', 1005, 'gpt'),
    ev('e5', 'api', 7777, 'gpt', '2026-10-10T00:00:00Z', 'someone-else'), // another customer
    ev('e6', 'api', 9999, 'gpt', '2026-11-02T00:00:00Z'), // after the period
  ])
  await eventually(async () => ((await usage(t.api, meter.id, {})).value === '21791' ? true : undefined), 'all tokens in ClickHouse')
  await eventually(async () => ((await usage(t.api, calls.id, {})).value === '6' ? true : undefined), 'all calls in ClickHouse')

  clock.set(new Date('2026-11-01T00:00:00Z'))
  await billDueSubscriptions(p.ctx, { tenantId: t.tenantId })
  const list = (await t.api.get(`/v1/invoices?subscription_id=${sub.id}`)).body.items
  assert.equal(list.length, 1)
  const inv = (await t.api.get(`/v1/invoices/${list[0].id}`)).body
  const line = (name: string) => inv.line_items.find((l: any) => l.display_name === name)

  // Tokens: 4015 x 0.001 = 4.015 -> 4.02; split as in the unit test above.
  const tokens = line('Tokens')
  assert.deepEqual([tokens.quantity, tokens.amount], ['4015', '4.02'])
  assert.deepEqual(tokens.usage_analytics, [
    { source: 'api', usage: '2005', cost: '2.00', percentage: '49.94', event_count: 2 },
    { source: 'sdk', usage: '1005', cost: '1.01', percentage: '25.03', event_count: 1 },
    { source: 'web', usage: '1005', cost: '1.01', percentage: '25.03', event_count: 1 },
  ])
  // By model: gpt 3005 (4.02 x 3005/4015 = 3.0087 -> 3.01), claude 1010 (1.0112 -> 1.01); 74.84 + 25.16.
  assert.deepEqual(tokens.usage_breakdown, [
    { grouped_by: { model: 'gpt' }, usage: '3005', cost: '3.01', percentage: '74.84', event_count: 2 },
    { grouped_by: { model: 'claude' }, usage: '1010', cost: '1.01', percentage: '25.16', event_count: 2 },
  ])
  // Calls: 4 x 0.10 = 0.40; the meter has no group_by, so no breakdown.
  const c = line('Calls')
  assert.deepEqual([c.amount, c.usage_breakdown], ['0.40', null])
  assert.deepEqual(c.usage_analytics, [
    { source: 'api', usage: '2', cost: '0.20', percentage: '50.00', event_count: 2 },
    { source: 'sdk', usage: '1', cost: '0.10', percentage: '25.00', event_count: 1 },
    { source: 'web', usage: '1', cost: '0.10', percentage: '25.00', event_count: 1 },
  ])
  // A fixed line has neither.
  assert.deepEqual([line('Base').usage_analytics, line('Base').usage_breakdown], [null, null])
  for (const l of [tokens, c]) {
    assert.equal(l.usage_analytics.reduce((a: any, i: any) => a.plus(i.cost), D(0)).toFixed(2), l.amount)
  }
})
