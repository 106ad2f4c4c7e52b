// Meters end to end: expressions (validated with the error position, evaluated by the aggregator
// on events that went through ingest -> Kafka -> aggregator -> ClickHouse), WEIGHTED_SUM,
// rounding, PUT /meters/{id} and tenancy.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ManualClock } from '../../platform/clock.js'
import { created, ingestAll, usage } from '../../test/support/fixtures.js'
import { eventually, usePlatform } from '../../test/support/platform.js'

const clock = new ManualClock(new Date('2026-12-02T00:00:00Z'))
const p = usePlatform({ services: ['billing-api', 'ingest', 'aggregator'], clock })

const llm = (id: string, properties: Record<string, unknown>, ts = '2026-11-10T12:00:00Z') =>
  ({ event_id: id, event_name: 'llm', external_customer_id: 'acme', timestamp: ts, properties })

test('an invalid expression is refused with its position; expression and field exclude each other', async () => {
  const t = await p.newTenant()
  const post = (aggregation: object) => t.api.post('/v1/meters', { name: 'M', event_name: 'llm', aggregation })
  const bad = await post({ type: 'SUM', expression: 'input_tokens + * 3' })
  assert.equal(bad.status, 400)
  assert.deepEqual(bad.body, {
    code: 'validation_error', http_status_code: 400,
    message: "aggregation.expression: expected a number, a property name or '(' but found '*' at position 16",
  })
  assert.match((await post({ type: 'SUM', expression: '(a + b' })).body.message, /expected '\)' but found end of expression at position 7/)
  assert.match((await post({ type: 'SUM', expression: 'a', field: 'a' })).body.message, /give aggregation.field or aggregation.expression, not both/)
  assert.match((await post({ type: 'COUNT_UNIQUE', expression: 'a' })).body.message, /not allowed for COUNT_UNIQUE/)
  assert.match((await post({ type: 'SUM' })).body.message, /aggregation.field \(or aggregation.expression\) is required for SUM/)
  assert.equal((await post({ type: 'SUM', expression: 'x'.repeat(1001) })).status, 400)
  assert.equal((await t.api.get('/v1/meters')).body.items.length, 0, 'nothing was created')
})

test('an expression meter counts input_tokens + 3 * output_tokens exactly through the pipeline; rounding applies on read', async () => {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', {
    name: 'Weighted tokens', event_name: 'llm', aggregation: { type: 'SUM', expression: 'input_tokens + 3 * output_tokens' },
  }))
  assert.deepEqual(meter.aggregation, { type: 'SUM', field: null, expression: 'input_tokens + 3 * output_tokens', multiplier: null, group_by: null })
  assert.deepEqual([meter.rounding, meter.bucket_size], [null, 'HOUR'])
  assert.deepEqual(Object.keys(meter).sort(), [
    'aggregation', 'bucket_size', 'created_at', 'created_by', 'environment_id', 'event_name', 'filters', 'id', 'metadata', 'name',
    'reset_usage', 'rounding', 'status', 'tenant_id', 'updated_at', 'updated_by',
  ])
  const rounded = await created(t.api.post('/v1/meters', {
    name: 'Rounded up', event_name: 'llm', aggregation: { type: 'SUM', expression: 'input_tokens / 1000' }, rounding: { mode: 'UP', precision: 1 },
  }))
  await ingestAll(t.api, [
    llm('e1', { input_tokens: 1200, output_tokens: 450 }), // 1200 + 1350 = 2550
    llm('e2', { input_tokens: '10', output_tokens: 0.5 }), // 10 + 1.5 = 11.5
    llm('e3', { input_tokens: 7 }), // output_tokens missing: skipped by the first meter, 0.007 for the second
    llm('e4', { input_tokens: 1, output_tokens: 'n/a' }), // non-numeric: skipped by the first meter
  ])
  // 2550 + 11.5 = 2561.5 over 2 events
  const u = await eventually(async () => {
    const r = await usage(t.api, meter.id, {})
    return r.event_count === 2 ? r : undefined
  }, 'expression usage in ClickHouse')
  assert.equal(u.value, '2561.5')
  // (1200 + 10 + 7 + 1) / 1000 = 1.218, rounded UP to one decimal: 1.3 (4 events)
  const r = await eventually(async () => {
    const x = await usage(t.api, rounded.id, {})
    return x.event_count === 4 ? x : undefined
  }, 'rounded usage')
  assert.equal(r.value, '1.3')

  // PUT: the name and rounding may change after events; HALF_UP to 0 decimals: 2561.5 -> 2562.
  const put = await t.api.put(`/v1/meters/${meter.id}`, { name: 'Renamed', rounding: { mode: 'HALF_UP', precision: 0 } })
  assert.equal(put.status, 200, JSON.stringify(put.body))
  assert.deepEqual([put.body.name, put.body.rounding], ['Renamed', { mode: 'HALF_UP', precision: 0 }])
  assert.equal((await usage(t.api, meter.id, {})).value, '2562')
  // DOWN to 0 decimals: 2561; no rounding again: 2561.5
  await t.api.put(`/v1/meters/${meter.id}`, { rounding: { mode: 'DOWN' } })
  assert.equal((await usage(t.api, meter.id, {})).value, '2561')
  await t.api.put(`/v1/meters/${meter.id}`, { rounding: null })
  assert.equal((await usage(t.api, meter.id, {})).value, '2561.5')

  // How events are counted cannot change once they exist.
  const refused = await t.api.put(`/v1/meters/${meter.id}`, { aggregation: { type: 'SUM', field: 'input_tokens' } })
  assert.equal(refused.status, 400)
  assert.equal(refused.body.code, 'invalid_operation')
  assert.match(refused.body.message, /aggregation cannot change once events named "llm" exist/)
  const refusedFilters = await t.api.put(`/v1/meters/${meter.id}`, { filters: [{ key: 'model', values: ['gpt'] }] })
  assert.match(refusedFilters.body.message, /filters cannot change/)
  // The same definition again is no change.
  const same = await t.api.put(`/v1/meters/${meter.id}`, { event_name: ' llm ', aggregation: { type: 'SUM', expression: 'input_tokens + 3 * output_tokens' } })
  assert.equal(same.status, 200, JSON.stringify(same.body))
  assert.equal((await t.api.get(`/v1/meters/${meter.id}`)).body.aggregation.expression, 'input_tokens + 3 * output_tokens')
  // A meter whose events do not exist yet may still change how it counts.
  const fresh = await created(t.api.post('/v1/meters', { name: 'Later', event_name: 'not_yet', aggregation: { type: 'COUNT' } }))
  const changed = await t.api.put(`/v1/meters/${fresh.id}`, { event_name: 'not_yet_either', aggregation: { type: 'MAX', expression: 'a * 2' } })
  assert.equal(changed.status, 200, JSON.stringify(changed.body))
  assert.deepEqual([changed.body.event_name, changed.body.aggregation.type], ['not_yet_either', 'MAX'])
  // ...but not into an event name whose events exist.
  const into = await t.api.put(`/v1/meters/${fresh.id}`, { event_name: 'llm' })
  assert.match(into.body.message, /event_name cannot change once events named "llm" exist/)
  // bucket_size: HOUR to MINUTE, not back.
  assert.equal((await t.api.put(`/v1/meters/${meter.id}`, { bucket_size: 'MINUTE' })).body.bucket_size, 'MINUTE')
  const back = await t.api.put(`/v1/meters/${meter.id}`, { bucket_size: 'HOUR' })
  assert.deepEqual([back.status, back.body.code], [400, 'invalid_operation'])
  assert.equal((await t.api.put(`/v1/meters/${meter.id}`, {})).status, 400, 'an empty update is refused')
  const badExpr = await t.api.put(`/v1/meters/${fresh.id}`, { aggregation: { type: 'SUM', expression: 'a +' } })
  assert.equal(badExpr.body.message, "aggregation.expression: expected a number, a property name or '(' but found end of expression at position 4")
})

test('WEIGHTED_SUM through the pipeline: GB stored over November with a gap', async () => {
  const t = await p.newTenant()
  const meter = await created(t.api.post('/v1/meters', { name: 'Storage', event_name: 'storage', aggregation: { type: 'WEIGHTED_SUM', field: 'gb' } }))
  const st = (id: string, ts: string, gb: number) => ({ event_id: id, event_name: 'storage', external_customer_id: 'acme', timestamp: ts, properties: { gb } })
  await ingestAll(t.api, [st('s0', '2026-10-31T00:00:00Z', 8), st('s1', '2026-11-07T00:00:00Z', 20), st('s2', '2026-11-25T00:00:00Z', 5)])
  const nov = { external_customer_id: 'acme', start_time: '2026-11-01T00:00:00Z', end_time: '2026-12-01T00:00:00Z' }
  // 8 GB x 6 days (carried in from Oct 31) + 20 x 18 days + 5 x 6 days = 48 + 360 + 30 = 438 GB days / 30 = 14.6
  const u = await eventually(async () => {
    const r = await usage(t.api, meter.id, nov)
    return r.event_count === 2 ? r : undefined
  }, 'weighted usage')
  assert.equal(u.value, '14.6')
  // Per day: Nov 6 holds 8, Nov 7 20 (its event counted there), Nov 30 5; 30 days in all.
  const days = await usage(t.api, meter.id, { ...nov, window_size: 'DAY' })
  const day = (d: string) => days.items.find((i: any) => i.window_start === `2026-11-${d}T00:00:00.000Z`)
  assert.equal(days.items.length, 30)
  assert.deepEqual([day('06').value, day('07').value, day('07').event_count, day('30').value], ['8', '20', 1, '5'])
  // Only the declared group_by (none here) can split a time-weighted meter.
  const grouped = await t.api.post(`/v1/meters/${meter.id}/usage`, { ...nov, group_by: ['disk'] })
  assert.deepEqual([grouped.status, grouped.body.code], [400, 'validation_error'])
})

test("another tenant's key can neither read nor change a meter", async () => {
  const owner = await p.newTenant()
  const other = await p.newTenant()
  const meter = await created(owner.api.post('/v1/meters', { name: 'Mine', event_name: 'x', aggregation: { type: 'COUNT' } }))
  assert.equal((await other.api.get(`/v1/meters/${meter.id}`)).status, 404)
  const put = await other.api.put(`/v1/meters/${meter.id}`, { name: 'Theirs' })
  assert.deepEqual([put.status, put.body.code], [404, 'not_found'])
  assert.equal((await owner.api.get(`/v1/meters/${meter.id}`)).body.name, 'Mine')
})
