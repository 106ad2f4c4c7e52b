// POST /v1/subscriptions/lineitems/search: every filter, sorting, pagination and tenant and
// environment isolation, against real Postgres through HTTP.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { usePlatform, sqlOn } from '../../test/support/platform.js'
import { created } from '../../test/support/fixtures.js'
import { assertError } from '../../test/support/assertions.js'

const clock = new ManualClock(new Date('2026-10-01T00:00:00Z'))
const p = usePlatform({ services: ['billing-api'], clock })

const sql = sqlOn(p)

const fee = { type: 'FIXED', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '20', billing_period: 'MONTHLY', invoice_cadence: 'ADVANCE', display_name: 'Fee' }
const calls = (meterId: string) => ({ type: 'USAGE', billing_model: 'FLAT_FEE', currency: 'EUR', amount: '0.5', meter_id: meterId, billing_period: 'MONTHLY', invoice_cadence: 'ARREAR', display_name: 'Calls' })

/**
 * Two subscriptions of one tenant: s1 (customer c1) from Oct 1, its Calls line ended on Nov 15;
 * s2 (customer c2) from Nov 1, its Calls line archived. Labels name line items as "s1 Fee".
 */
async function setup() {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'calls', event_name: 'call', aggregation: { type: 'COUNT' } }))
  const plan = await created(t.api.post('/v1/plans', { name: 'Pro', prices: [fee, calls(meter.id)] }))
  const c1 = await created(t.api.post('/v1/customers', { external_id: 'c1' }))
  const c2 = await created(t.api.post('/v1/customers', { external_id: 'c2' }))
  const s1 = await created(t.api.post('/v1/subscriptions', { customer_id: c1.id, plan_id: plan.id, currency: 'EUR', start_date: '2026-10-01T00:00:00Z' }))
  const s2 = await created(t.api.post('/v1/subscriptions', { customer_id: c2.id, plan_id: plan.id, currency: 'EUR', start_date: '2026-11-01T00:00:00Z' }))
  const line = (s: any, name: string) => s.line_items.find((l: any) => l.display_name === name)
  await sql(`UPDATE subscription_line_items SET end_date = '2026-11-15T00:00:00Z' WHERE id = ?`, [line(s1, 'Calls').id])
  await sql(`UPDATE subscription_line_items SET status = 'archived' WHERE id = ?`, [line(s2, 'Calls').id])
  // Lines created in one transaction share created_at: spread them for a deterministic default order.
  const order = [line(s1, 'Fee'), line(s1, 'Calls'), line(s2, 'Fee'), line(s2, 'Calls')]
  for (const [i, l] of order.entries()) await sql(`UPDATE subscription_line_items SET created_at = ? WHERE id = ?`, [new Date(Date.UTC(2026, 9, 1, 0, 0, i)), l.id])
  const labels = new Map<string, string>()
  for (const [tag, s] of [['s1', s1], ['s2', s2]] as const) for (const l of s.line_items) labels.set(l.id, `${tag} ${l.display_name}`)
  const search = async (body: object) => {
    const res = await t.api.post('/v1/subscriptions/lineitems/search', body)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }
  const names = async (body: object) => (await search(body)).items.map((l: any) => labels.get(l.id) ?? l.id)
  return { t, plan, meter, c1, c2, s1, s2, line, search, names, priceOf: (s: any, name: string) => line(s, name).price_id }
}

test('defaults: published line items of the caller, oldest first, with the line item fields', async () => {
  const { names, search, s1, line } = await setup()
  assert.deepEqual(await names({}), ['s1 Fee', 's1 Calls', 's2 Fee'])
  const body = await search({})
  assert.deepEqual(body.pagination, { limit: 50, offset: 0, total: 3 })
  const calls1 = body.items[1]
  assert.deepEqual(
    [calls1.id, calls1.subscription_id, calls1.customer_id, calls1.quantity, calls1.start_date, calls1.end_date, calls1.status],
    [line(s1, 'Calls').id, s1.id, s1.customer_id, '1', '2026-10-01T00:00:00.000Z', '2026-11-15T00:00:00.000Z', 'published'],
  )
})

test('filters: subscription_ids, price_ids, customer_id, status', async () => {
  const { names, s1, s2, c2, priceOf } = await setup()
  assert.deepEqual(await names({ subscription_ids: [s2.id] }), ['s2 Fee'])
  assert.deepEqual(await names({ subscription_ids: [s1.id, s2.id] }), ['s1 Fee', 's1 Calls', 's2 Fee'])
  assert.deepEqual(await names({ price_ids: [priceOf(s1, 'Calls')] }), ['s1 Calls'])
  assert.deepEqual(await names({ customer_id: c2.id }), ['s2 Fee'])
  assert.deepEqual(await names({ customer_id: c2.id, price_ids: [priceOf(s1, 'Calls')] }), [])
  assert.deepEqual(await names({ status: 'published' }), ['s1 Fee', 's1 Calls', 's2 Fee'])
  assert.deepEqual(await names({ status: 'archived' }), ['s2 Calls'])
  assert.deepEqual(await names({ status: 'deleted' }), [])
})

test('filters: active_at is half-open [start_date, end_date); date ranges are inclusive', async () => {
  const { names } = await setup()
  assert.deepEqual(await names({ active_at: '2026-09-30T23:59:59Z' }), [])
  assert.deepEqual(await names({ active_at: '2026-10-01T00:00:00Z' }), ['s1 Fee', 's1 Calls'])
  assert.deepEqual(await names({ active_at: '2026-11-14T23:59:59Z' }), ['s1 Fee', 's1 Calls', 's2 Fee'])
  assert.deepEqual(await names({ active_at: '2026-11-15T00:00:00Z' }), ['s1 Fee', 's2 Fee'])
  assert.deepEqual(await names({ start_date_gte: '2026-11-01T00:00:00Z' }), ['s2 Fee'])
  assert.deepEqual(await names({ start_date_lte: '2026-11-01T00:00:00Z' }), ['s1 Fee', 's1 Calls', 's2 Fee'])
  assert.deepEqual(await names({ start_date_lte: '2026-10-31T23:59:59Z' }), ['s1 Fee', 's1 Calls'])
  assert.deepEqual(await names({ start_date_gte: '2026-10-01T00:00:01Z', start_date_lte: '2026-11-01T00:00:00Z' }), ['s2 Fee'])
  // an open end matches no end_date range
  assert.deepEqual(await names({ end_date_gte: '2026-11-15T00:00:00Z', end_date_lte: '2026-11-15T00:00:00Z' }), ['s1 Calls'])
  assert.deepEqual(await names({ end_date_gte: '2026-11-15T00:00:01Z' }), [])
  assert.deepEqual(await names({ end_date_lte: '2026-11-14T23:59:59Z' }), [])
})

test('sort by start_date, end_date and created_at, ties broken by id', async () => {
  const { names, s1, line } = await setup()
  assert.deepEqual(await names({ sort: [{ field: 'created_at', direction: 'desc' }] }), ['s2 Fee', 's1 Calls', 's1 Fee'])
  assert.deepEqual(await names({ sort: [{ field: 'start_date', direction: 'desc' }, { field: 'created_at', direction: 'asc' }] }), ['s2 Fee', 's1 Fee', 's1 Calls'])
  // nulls (open ends) sort last ascending; s1's two lines tie on start_date: id decides
  assert.deepEqual((await names({ sort: [{ field: 'end_date', direction: 'asc' }] }))[0], 's1 Calls')
  const tied = (await sql(`SELECT id FROM subscription_line_items WHERE subscription_id = ? AND status = 'published' ORDER BY id`, [s1.id])).map((r: any) => r.id)
  const bothOfS1 = (await names({ subscription_ids: [s1.id], sort: [{ field: 'start_date' }] }))
  assert.deepEqual(bothOfS1, tied.map((id: string) => (id === line(s1, 'Fee').id ? 's1 Fee' : 's1 Calls')))
})

test('pagination: limit and offset over a stable order; bad bodies are validation errors', async () => {
  const { t, search, names } = await setup()
  const first = await search({ limit: 2 })
  assert.deepEqual(first.pagination, { limit: 2, offset: 0, total: 3 })
  assert.equal(first.items.length, 2)
  assert.deepEqual(await names({ limit: 2, offset: 2 }), ['s2 Fee'])
  assert.deepEqual((await search({ limit: 2, offset: 5 })).items, [])
  assert.deepEqual((await search({ limit: 1000, offset: 1 })).pagination, { limit: 1000, offset: 1, total: 3 })
  const bad = (body: object) => t.api.post('/v1/subscriptions/lineitems/search', body)
  for (const body of [
    { limit: 0 }, { limit: 1001 }, { offset: -1 }, { status: 'gone' }, { active_at: 'yesterday' }, { sort: [{ field: 'quantity' }] },
    { sort: [{ field: 'start_date', direction: 'up' }] }, { subscription_ids: [] }, { subscription_ids: 'x' }, { unknown: 1 },
  ]) {
    assertError(await bad(body), 400, 'validation_error')
  }
})

test('isolation: another tenant and another environment see none of these line items', async () => {
  const { t, s1, names } = await setup()
  const other = await setup()
  assert.deepEqual(await other.names({ subscription_ids: [s1.id] }), [])
  assert.deepEqual(await names({ subscription_ids: [other.s1.id] }), [])
  assert.deepEqual((await other.search({})).items.map((l: any) => l.subscription_id).sort(), [other.s1.id, other.s1.id, other.s2.id].sort())
  const dev = p.client(t.apiKey, t.environments.development)
  const res = await dev.post('/v1/subscriptions/lineitems/search', { subscription_ids: [s1.id] })
  assert.equal(res.status, 200, JSON.stringify(res.body))
  assert.deepEqual(res.body, { items: [], pagination: { limit: 50, offset: 0, total: 0 } })
})
