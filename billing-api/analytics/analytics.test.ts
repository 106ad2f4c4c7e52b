// Analytics over real data: meter usage detailed analytics (breakdown_bucket, group_by, window
// sizes, reporting units), the streamed usage analytics CSV export and the revenue dashboard,
// each with hand-computed figures, and isolation between tenants.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { eventually, usePlatform } from '../../test/support/platform.js'
import { assertError, newFeature } from '../features/test-kit.js'
import { csvChunks } from '../http/csv.js'
import { usageExport } from './usage-export.js'

const clock = new ManualClock(new Date('2026-11-03T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock, config: { usageExportPageSize: 2 } })

test('csvChunks pulls one page per chunk: nothing is read ahead of the reader', async () => {
  let pulled = 0
  async function* pages() {
    for (let i = 0; i < 1000; i++) {
      pulled++
      yield [[`row${i}`, i]]
    }
  }
  const chunks = csvChunks(['name', 'n'], pages())
  assert.equal((await chunks.next()).value, 'name,n\r\n')
  assert.equal(pulled, 0)
  assert.equal((await chunks.next()).value, 'row0,0\r\n')
  assert.equal((await chunks.next()).value, 'row1,1\r\n')
  assert.equal(pulled, 2)
  await chunks.return(undefined)
})

async function usageData() {
  const t = await p.newTenant()
  const tokens = await created(t.api.post('/v1/meters', { name: 'Tokens', event_name: 'llm', aggregation: { type: 'SUM', field: 'tokens', group_by: 'model' } }))
  const calls = await created(t.api.post('/v1/meters', { name: 'Calls', event_name: 'llm', aggregation: { type: 'COUNT' } }))
  const feature = await newFeature(t.api, {
    name: 'Tokens', type: 'metered', meter_id: tokens.id, reporting_unit: { conversion_rate: 100, unit_singular: 'hundred tokens', unit_plural: 'hundred tokens' },
  })
  const ev = (id: string, customer: string, ts: string, model: string, n: number) =>
    ({ event_id: id, event_name: 'llm', external_customer_id: customer, timestamp: ts, properties: { tokens: n, model } })
  await ingestAll(t.api, [
    ev('a1', 'acme', '2026-11-01T10:15:00Z', 'gpt', 100),
    ev('a2', 'acme', '2026-11-01T10:45:00Z', 'claude', 50),
    ev('a3', 'acme', '2026-11-01T11:05:00Z', 'gpt', 30),
    ev('a4', 'acme', '2026-11-02T09:00:00Z', 'gpt', 200),
    ev('b1', 'beta', '2026-11-01T10:20:00Z', 'gpt', 7),
    ev('x1', 'acme', '2026-10-31T23:59:59.999Z', 'gpt', 1000), // before the range
  ])
  await eventually(async () => ((await usage(t.api, tokens.id, {})).value === '1387' ? true : undefined), 'all events in ClickHouse')
  await eventually(async () => ((await usage(t.api, calls.id, {})).value === '6' ? true : undefined), 'all calls in ClickHouse')
  return { t, tokens, calls, feature }
}

const range = { start_time: '2026-11-01T00:00:00Z', end_time: '2026-11-03T00:00:00Z' }

test('meter usage analytics: totals, per-bucket series with breakdown_bucket, group_by and window sizes, reporting units', async () => {
  const { t, tokens, calls, feature } = await usageData()
  const analytics = (body: object) => t.api.post('/v1/analytics/meter-usage', { ...range, ...body })
  const plain = await analytics({ meter_ids: [tokens.id], external_customer_id: 'acme' })
  assert.equal(plain.status, 200, JSON.stringify(plain.body))
  // acme in range: 100 + 50 + 30 + 200 = 380 tokens, 3.8 hundred tokens.
  assert.deepEqual(plain.body, {
    start_time: '2026-11-01T00:00:00.000Z', end_time: '2026-11-03T00:00:00.000Z',
    window_size: null,
    items: [{
      meter_id: tokens.id, meter_name: 'Tokens', event_name: 'llm', aggregation: 'SUM', feature_id: feature.id, group_by: {},
      value: '380', event_count: 4, reported_usage: { value: '3.8', unit: 'hundred tokens' }, buckets: null,
    }],
  })
  // Daily buckets: Nov 1 = 180 (3 events), Nov 2 = 200 (1).
  const daily = (await analytics({ meter_ids: [tokens.id], external_customer_id: 'acme', breakdown_bucket: true })).body
  assert.equal(daily.window_size, 'DAY')
  assert.deepEqual(daily.items[0].buckets, [
    { window_start: '2026-11-01T00:00:00.000Z', value: '180', event_count: 3, reported_usage: { value: '1.8', unit: 'hundred tokens' } },
    { window_start: '2026-11-02T00:00:00.000Z', value: '200', event_count: 1, reported_usage: { value: '2', unit: 'hundred tokens' } },
  ])
  // By model, hourly: claude 50 at 10:00; gpt 100 at 10:00, 30 at 11:00, 200 on Nov 2 at 09:00.
  const hourly = (await analytics({ meter_ids: [tokens.id], external_customer_id: 'acme', group_by: ['model'], window_size: 'HOUR', breakdown_bucket: true })).body
  assert.deepEqual(hourly.items.map((i: any) => [i.group_by, i.value, i.event_count, i.buckets.map((b: any) => [b.window_start.slice(0, 13), b.value, b.event_count])]), [
    [{ model: 'claude' }, '50', 1, [['2026-11-01T10', '50', 1]]],
    [{ model: 'gpt' }, '330', 3, [['2026-11-01T10', '100', 1], ['2026-11-01T11', '30', 1], ['2026-11-02T09', '200', 1]]],
  ])
  // Every meter, every customer: tokens 387 (acme 380 + beta 7), calls 5; calls has no reporting unit.
  const all = (await analytics({})).body
  assert.deepEqual(all.items.map((i: any) => [i.meter_id, i.value, i.event_count, i.reported_usage]), [
    [tokens.id, '387', 5, { value: '3.87', unit: 'hundred tokens' }], [calls.id, '5', 5, null],
  ])
  const minutes = (await analytics({ meter_ids: [calls.id], external_customer_ids: ['beta'], window_size: 'MINUTE', breakdown_bucket: true })).body
  assert.deepEqual(minutes.items[0].buckets.map((b: any) => [b.window_start, b.value]), [['2026-11-01T10:20:00.000Z', '1']])

  assertError(await analytics({ meter_ids: ['meter_nope'] }), 400, 'validation_error', /meter_ids: meter meter_nope not found/)
  assertError(await analytics({ window_size: 'WEEK' }), 400, 'validation_error', /window_size/)
  assertError(await t.api.post('/v1/analytics/meter-usage', { start_time: range.end_time, end_time: range.start_time }), 400, 'validation_error', /start_time must be before end_time/)
  // Another tenant's key cannot read these meters, and its own analytics hold nothing of them.
  const other = await p.newTenant('other')
  assertError(await other.api.post('/v1/analytics/meter-usage', { ...range, meter_ids: [tokens.id] }), 400, 'validation_error', /not found/)
  assert.deepEqual((await other.api.post('/v1/analytics/meter-usage', range)).body.items, [])
})

test('usage analytics export: every customer with name, metadata fields and per-meter breakdown rows, streamed page by page', async () => {
  const { t, tokens, calls } = await usageData()
  const acme = await created(t.api.post('/v1/customers', { external_id: 'acme', name: 'Acme, Inc.', metadata: { region: 'eu', tier: 'gold' } }))
  const beta = await created(t.api.post('/v1/customers', { external_id: 'beta', name: 'Beta', metadata: { region: 'us' } }))
  const gamma = await created(t.api.post('/v1/customers', { external_id: 'gamma' }))
  const res = await fetch(`${p.url}/v1/analytics/usage/export`, {
    method: 'POST', headers: { 'x-api-key': t.apiKey, 'content-type': 'application/json' },
    body: JSON.stringify({ ...range, metadata_fields: ['region', 'tier'] }),
  })
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8')
  const text = await res.text()
  const rows: Record<string, string[]> = {
    // tokens by model (claude 50, gpt 330: 0.5 and 3.3 hundred tokens), then calls (4 events).
    [acme.id]: [
      `acme,"Acme, Inc.",eu,gold,${tokens.id},Tokens,model,claude,50,1,0.5,hundred tokens`,
      `acme,"Acme, Inc.",eu,gold,${tokens.id},Tokens,model,gpt,330,3,3.3,hundred tokens`,
      `acme,"Acme, Inc.",eu,gold,${calls.id},Calls,,,4,4,,`,
    ],
    [beta.id]: [`beta,Beta,us,,${tokens.id},Tokens,model,gpt,7,1,0.07,hundred tokens`, `beta,Beta,us,,${calls.id},Calls,,,1,1,,`],
    // No usage: a row of 0 per meter.
    [gamma.id]: [`gamma,,,,${tokens.id},Tokens,model,,0,0,0,hundred tokens`, `gamma,,,,${calls.id},Calls,,,0,0,,`],
  }
  const expected = [
    'external_customer_id,customer_name,metadata.region,metadata.tier,meter_id,meter_name,group_by,group_value,value,event_count,reported_value,reported_unit',
    ...Object.keys(rows).sort().flatMap((id) => rows[id]),
  ]
  assert.equal(text, expected.map((l) => l + '\r\n').join(''))

  // Page by page (2 customers a page here): the first chunk after the header holds only the first page,
  // and the progress log counts rows as pages go out.
  const logs: [string, Record<string, unknown>][] = []
  const scope = { tenant_id: t.tenantId, environment_id: t.environments.production }
  const csv = await usageExport(p.ctx, p.ctx.orm.em.fork(), scope, { ...range, meter_ids: [calls.id] }, (m, f) => logs.push([m, f]), 2)
  const chunks: string[] = []
  for await (const c of csv.chunks) chunks.push(c)
  assert.equal(chunks.length, 3)
  assert.equal(chunks[1].split('\r\n').length - 1, 2)
  assert.equal(chunks[2].split('\r\n').length - 1, 1)
  assert.deepEqual(logs, [['usage export progress', { rows: 2, customers: 2 }], ['usage export done', { rows: 3, customers: 3 }]])

  // Another tenant's export names none of these customers; unknown meters are refused before streaming.
  const other = await p.newTenant('other')
  const theirs = await other.api.post('/v1/analytics/usage/export', range)
  assert.equal(theirs.status, 200)
  assert.equal(theirs.body.trim().split('\r\n').length, 1)
  assertError(await other.api.post('/v1/analytics/usage/export', { ...range, meter_ids: [tokens.id] }), 400, 'validation_error', /not found/)
})

test('revenue dashboard: finalized invoices per customer and currency, by total descending, with exact series', async () => {
  const t = await p.newTenant()
  const acme = await created(t.api.post('/v1/customers', { external_id: 'acme', name: 'Acme' }))
  const beta = await created(t.api.post('/v1/customers', { external_id: 'beta', name: 'Beta' }))
  const invoice = async (customerId: string, currency: string, amounts: string[], finalizeAt: string | null) => {
    clock.set(new Date(finalizeAt ?? '2026-11-20T00:00:00Z'))
    const inv = await created(t.api.post('/v1/invoices', {
      customer_id: customerId, invoice_type: 'ONE_OFF', currency, line_items: amounts.map((amount, i) => ({ display_name: `l${i}`, amount })),
    }))
    if (finalizeAt) assert.equal((await t.api.post(`/v1/invoices/${inv.id}/finalize`, {})).status, 200)
  }
  await invoice(acme.id, 'USD', ['100', '0.10'], '2026-10-05T10:00:00Z') // 100.10
  await invoice(acme.id, 'USD', ['20.05'], '2026-11-02T08:00:00Z')
  await invoice(acme.id, 'USD', ['5000'], null) // a draft: not revenue
  await invoice(acme.id, 'USD', ['1'], '2026-12-05T00:00:00Z') // after the range
  await invoice(beta.id, 'USD', ['149.99', '0.01'], '2026-11-10T00:00:00Z') // 150.00
  await invoice(beta.id, 'EUR', ['999'], '2026-11-10T00:00:00Z')

  const dash = (body: object, api = t.api) => api.post('/v1/dashboard/revenue-dashboard', { start_time: '2026-10-01T00:00:00Z', end_time: '2026-12-01T00:00:00Z', ...body })
  const res = await dash({})
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body.items.map((i: any) => [i.external_customer_id, i.customer_name, i.currency, i.total_revenue, i.invoice_count, i.series.map((s: any) => [s.window_start, s.revenue])]), [
    ['beta', 'Beta', 'EUR', '999.00', 1, [['2026-11-01T00:00:00.000Z', '999.00']]],
    ['beta', 'Beta', 'USD', '150.00', 1, [['2026-11-01T00:00:00.000Z', '150.00']]],
    // 100.10 + 20.05 = 120.15
    ['acme', 'Acme', 'USD', '120.15', 2, [['2026-10-01T00:00:00.000Z', '100.10'], ['2026-11-01T00:00:00.000Z', '20.05']]],
  ])
  assert.deepEqual(res.body.pagination, { limit: 50, offset: 0, total: 3 })
  assert.equal(res.body.window_size, 'MONTH')
  // USD only, weekly (weeks start on Monday: Oct 5 and Nov 2 2026 are Mondays, Nov 10 is in the week of Nov 9), second page of one.
  const page = (await dash({ currency: 'USD', window_size: 'WEEK', limit: 1, offset: 1 })).body
  assert.deepEqual(page.items.map((i: any) => [i.customer_id, i.total_revenue, i.series.map((s: any) => [s.window_start.slice(0, 10), s.revenue])]), [
    [acme.id, '120.15', [['2026-10-05', '100.10'], ['2026-11-02', '20.05']]],
  ])
  assert.deepEqual(page.pagination, { limit: 1, offset: 1, total: 2 })
  const beta1 = (await dash({ currency: 'USD', window_size: 'DAY', limit: 1 })).body.items[0]
  assert.deepEqual([beta1.external_customer_id, beta1.series], ['beta', [{ window_start: '2026-11-10T00:00:00.000Z', revenue: '150.00', invoice_count: 1 }]])

  assertError(await dash({ window_size: 'YEAR' }), 400, 'validation_error', /window_size/)
  assertError(await dash({ currency: 'usd' }), 400, 'validation_error', /currency/)
  const other = await p.newTenant('other')
  assert.deepEqual((await dash({}, other.api)).body.items, [])
})
