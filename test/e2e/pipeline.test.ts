// End to end through every real component: HTTP ingest -> Kafka -> aggregator -> ClickHouse
// -> usage query -> invoice computed by the scheduler's billing job.
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { eventually, startTestPlatform, type TestPlatform } from '../support/platform.js'
import { created, ingestAll, usage } from '../support/fixtures.js'

let p: TestPlatform
const clock = new ManualClock(new Date('2026-11-05T00:00:00Z'))

before(async () => {
  p = await startTestPlatform({ clock })
})
after(async () => {
  await p?.stop()
})

test('10,000 events become exact meter totals and an exact invoice', async () => {
  const { api, tenantId } = await p.newTenant('E2E Inc.')
  const tokens = await created(api.post('/v1/meters', { name: 'Tokens', event_name: 'llm_call', aggregation: { type: 'SUM', field: 'tokens' } }))
  const calls = await created(api.post('/v1/meters', { name: 'Calls', event_name: 'llm_call', aggregation: { type: 'COUNT' } }))
  const users = await created(api.post('/v1/meters', { name: 'Users', event_name: 'llm_call', aggregation: { type: 'COUNT_UNIQUE', field: 'user_id' } }))

  // 10,000 October events for acme: tokens = (i mod 100) + 0.25, user_id = i mod 37.
  const events = Array.from({ length: 10_000 }, (_, i) => ({
    event_id: `acme-${i}`,
    event_name: 'llm_call',
    external_customer_id: 'acme',
    timestamp: new Date(Date.UTC(2026, 9, 1) + i * 60_000).toISOString(), // one a minute from Oct 1 (~6.9 days)
    properties: { tokens: (i % 100) + 0.25, user_id: `u${i % 37}` },
  }))
  // Noise that must not count: another customer, and acme in November (outside the period).
  events.push({ event_id: 'other-1', event_name: 'llm_call', external_customer_id: 'other', timestamp: '2026-10-10T00:00:00Z', properties: { tokens: 1000, user_id: 'x' } })
  events.push({ event_id: 'acme-nov', event_name: 'llm_call', external_customer_id: 'acme', timestamp: '2026-11-01T00:00:00Z', properties: { tokens: 1000, user_id: 'late' } })
  await ingestAll(api, events)

  const october = { external_customer_id: 'acme', start_time: '2026-10-01T00:00:00Z', end_time: '2026-11-01T00:00:00Z' }
  // sum = 100 * (0 + 1 + ... + 99) + 10,000 * 0.25 = 495,000 + 2,500
  const sum = await eventually(async () => {
    const u = await usage(api, tokens.id, october)
    return u.event_count === 10_000 ? u.value : undefined
  }, 'all 10,000 events in ClickHouse')
  assert.equal(sum, '497500')
  assert.equal((await usage(api, calls.id, october)).value, '10000')
  assert.equal((await usage(api, users.id, october)).value, '37')
  // The November event may reach ClickHouse after October's (another request, another partition).
  const allTime = await eventually(async () => {
    const u = await usage(api, tokens.id, { external_customer_id: 'acme' })
    return u.event_count === 10_001 ? u.value : undefined
  }, 'the November event in ClickHouse')
  assert.equal(allTime, '498500', 'all-time includes the November event')

  // Daily windows: Oct 1 holds events 0..1439 (1440 minutes): 14 full cycles of 100 + 0..39.
  const daily = await usage(api, calls.id, { ...october, window_size: 'DAY' })
  assert.equal(daily.items[0].window_start, '2026-10-01T00:00:00.000Z')
  assert.equal(daily.items[0].value, '1440')
  assert.equal(daily.items.length, 7)

  // Plan: 0.002 USD per token in arrear plus a 10 USD monthly fee in arrear.
  const customer = await created(api.post('/v1/customers', { external_id: 'acme', name: 'Acme' }))
  const plan = await created(api.post('/v1/plans', {
    name: 'Pay as you go',
    prices: [
      { type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'USD', amount: '0.002', meter_id: tokens.id, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Tokens' },
      { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'USD', amount: '10', billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Platform fee' },
    ],
  }))
  const sub = await created(api.post('/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, currency: 'usd', start_date: '2026-10-01T00:00:00Z' }))
  assert.equal(sub.current_period_end, '2026-11-01T00:00:00.000Z')

  const preview = await api.post('/v1/invoices/internal/preview', { subscription_id: sub.id })
  assert.equal(preview.status, 200)
  assert.equal(preview.body.total, '1005.00') // 497,500 x 0.002 = 995.00, + 10.00

  // The billing schedule (a real BullMQ job) bills the ended October period exactly once.
  assert.equal(await p.scheduler!.trigger('subscription-billing', { tenant_id: tenantId }), 1)
  assert.equal(await p.scheduler!.trigger('subscription-billing', { tenant_id: tenantId }), 0)
  const list = await api.get(`/v1/invoices?subscription_id=${sub.id}`)
  assert.equal(list.body.pagination.total, 1)
  const invoice = (await api.get(`/v1/invoices/${list.body.items[0].id}`)).body
  assert.equal(invoice.billing_reason, 'SUBSCRIPTION_CYCLE')
  assert.equal(invoice.invoice_status, 'DRAFT')
  assert.equal(invoice.period_start, '2026-10-01T00:00:00.000Z')
  assert.equal(invoice.period_end, '2026-11-01T00:00:00.000Z')
  assert.equal(invoice.subtotal, '1005.00')
  assert.equal(invoice.total, '1005.00')
  assert.equal(invoice.amount_due, '1005.00')
  const byName = Object.fromEntries(invoice.line_items.map((l: any) => [l.display_name, l]))
  assert.equal(byName.Tokens.quantity, '497500')
  assert.equal(byName.Tokens.amount, '995.00')
  assert.equal(byName['Platform fee'].amount, '10.00')

  const subAfter = (await api.get(`/v1/subscriptions/${sub.id}`)).body
  assert.equal(subAfter.current_period_start, '2026-11-01T00:00:00.000Z')
  assert.equal(subAfter.current_period_end, '2026-12-01T00:00:00.000Z')
})

test('group_by splits usage by an event property', async () => {
  const { api } = await p.newTenant()
  const m = await created(api.post('/v1/meters', { name: 'Bytes', event_name: 'upload', aggregation: { type: 'SUM', field: 'bytes', multiplier: '0.001' } }))
  await ingestAll(api, [
    { event_id: 'a', event_name: 'upload', external_customer_id: 'c', timestamp: '2026-10-01T00:00:00Z', properties: { bytes: 1500, region: 'eu' } },
    { event_id: 'b', event_name: 'upload', external_customer_id: 'c', timestamp: '2026-10-01T00:00:01Z', properties: { bytes: '2500', region: 'us' } },
    { event_id: 'c', event_name: 'upload', external_customer_id: 'c', timestamp: '2026-10-01T00:00:02Z', properties: { bytes: 1, region: 'eu' } },
  ])
  const u = await eventually(async () => {
    const r = await usage(api, m.id, { external_customer_id: 'c', group_by: ['region'] })
    return r.event_count === 3 ? r : undefined
  }, 'three events')
  assert.equal(u.value, '4.001')
  assert.deepEqual(u.items.map((i: any) => [i.group_by.region, i.value]), [['eu', '1.501'], ['us', '2.5']])
})

test('a meter created after its events arrived is backfilled from the raw events', async () => {
  const { api } = await p.newTenant()
  await ingestAll(api, [
    { event_id: 'late-1', event_name: 'job_run', external_customer_id: 'c', properties: { seconds: 30 } },
    { event_id: 'late-2', event_name: 'job_run', external_customer_id: 'c', properties: { seconds: 12.5 } },
  ])
  // Wait until both raw events are in ClickHouse: a COUNT meter on another name proves the batch was consumed.
  const probe = await created(api.post('/v1/meters', { name: 'probe', event_name: 'job_run', aggregation: { type: 'COUNT' } }))
  await eventually(async () => ((await usage(api, probe.id, {})).value === '2' ? true : undefined), 'probe meter backfilled')
  const seconds = await created(api.post('/v1/meters', { name: 'Seconds', event_name: 'job_run', aggregation: { type: 'MAX', field: 'seconds' } }))
  const max = await eventually(async () => {
    const u = await usage(api, seconds.id, { external_customer_id: 'c' })
    return u.event_count === 2 ? u.value : undefined
  }, 'backfilled meter')
  assert.equal(max, '30')
})
