import { test } from 'node:test'
import { eventDigest, keyText, shardOf } from '../schemas/shards.js'
import assert from 'node:assert/strict'
import type { IngestBatch } from '../schemas/events.js'
import {
  bucketRow, dedupVersion, groupValue, indexMeters, matchesFilters, meterEventRow, meterHits, meterValue, monthOf, rawRow, readProperty,
} from './meter-rows.js'
import type { MeterDefinition } from '../schemas/meters.js'

const meter = (over: Partial<MeterDefinition> & { aggregation: MeterDefinition['aggregation'] }): MeterDefinition => ({
  id: 'm', tenant_id: 't', environment_id: 'e', event_name: 'call', filters: [], ...over,
})

test('values: numbers and numeric strings keep their digits; multiplier and 12-digit scale are exact', () => {
  const sum = meter({ aggregation: { type: 'SUM', field: 'n' } })
  assert.deepEqual(meterValue(sum, { n: 0.1 }), { value: '0.1', text: '' })
  assert.deepEqual(meterValue(sum, { n: '123456789012345.123456789' }), { value: '123456789012345.123456789', text: '' })
  assert.deepEqual(meterValue(sum, { n: ' 7 ' }), { value: '7', text: '' })
  assert.deepEqual(meterValue(sum, { n: '0.0000000000005' }), { skip: 'inexact' }, 'more than 12 decimals is never rounded silently')
  assert.deepEqual(meterValue(sum, { n: '1.0000000000000000001' }), { skip: 'inexact' })
  assert.deepEqual(meterValue(sum, { n: '1.500000000000000' }), { value: '1.5', text: '' }, 'trailing zeros are not digits lost')
  const kb = meter({ aggregation: { type: 'SUM', field: 'bytes', multiplier: '0.001' } })
  assert.deepEqual(meterValue(kb, { bytes: 1536 }), { value: '1.536', text: '' })
  assert.deepEqual(meterValue(sum, { n: 'abc' }), { skip: 'non_numeric' })
  assert.deepEqual(meterValue(sum, { n: '1e5' }), { skip: 'non_numeric' })
  assert.deepEqual(meterValue(sum, { n: true }), { skip: 'non_numeric' })
  assert.deepEqual(meterValue(sum, {}), { skip: 'missing_field' })
  assert.deepEqual(meterValue(sum, { n: '1' + '0'.repeat(26) }), { skip: 'out_of_range' })
})

test('COUNT needs no field; COUNT_UNIQUE keys on the value text', () => {
  assert.deepEqual(meterValue(meter({ aggregation: { type: 'COUNT' } }), {}), { value: '1', text: '' })
  const uniq = meter({ aggregation: { type: 'COUNT_UNIQUE', field: 'user' } })
  assert.deepEqual(meterValue(uniq, { user: 'u1' }), { value: '1', text: 'u1' })
  assert.deepEqual(meterValue(uniq, { user: 42 }), { value: '1', text: '42' })
})

test('nested field paths and filters', () => {
  assert.equal(readProperty({ usage: { input: { tokens: 5 } } }, 'usage.input.tokens'), 5)
  assert.equal(readProperty({ 'a.b': 1, a: { b: 2 } }, 'a.b'), 1, 'a literal dotted key wins')
  const m = meter({ aggregation: { type: 'COUNT' }, filters: [{ key: 'region', values: ['eu', 'us'] }, { key: 'tier', values: ['1'] }] })
  assert.equal(matchesFilters(m, { region: 'eu', tier: 1 }), true)
  assert.equal(matchesFilters(m, { region: 'ap', tier: 1 }), false)
  assert.equal(matchesFilters(m, { region: 'eu' }), false)
})

test('rows: raw row per event, a meter event and a bucket input row per matching meter; keys are stable', () => {
  const index = indexMeters([
    meter({ id: 'calls', aggregation: { type: 'COUNT', group_by: 'region' } }),
    meter({ id: 'tokens', aggregation: { type: 'SUM', field: 'tokens' } }),
    meter({ id: 'other-env', environment_id: 'e2', aggregation: { type: 'COUNT' } }),
  ])
  const batch: IngestBatch = { batch_id: 'b', tenant_id: 't', environment_id: 'e', ingested_at: Date.parse('2026-10-01T00:00:00.500Z'), events: [] }
  const e = (id: string, name: string, properties: string) => ({
    event_id: id, event_name: name, external_customer_id: 'c', customer_id: null, timestamp: Date.parse('2026-10-01T00:00:00Z'), source: 'api', properties,
  })
  const skipped: Record<string, number> = {}
  const m1 = meterHits(index, 't', 'e', e('e1', 'call', '{"tokens":3,"region":"eu"}'), skipped)!
  assert.deepEqual(m1.hits.map((h) => [h.meter.id, h.value]), [['calls', '1'], ['tokens', '3']])
  const m2 = meterHits(index, 't', 'e', e('e2', 'call', '{}'), skipped)!
  assert.deepEqual(m2.hits.map((h) => h.meter.id), ['calls'])
  assert.deepEqual(skipped, { missing_field: 1 })
  assert.equal(meterHits(index, 't', 'e', e('e3', 'other', '{}'), skipped), null)

  const ev1 = e('e1', 'call', '{"tokens":3,"region":"eu"}')
  assert.equal(rawRow(batch, ev1).length, 11)
  assert.deepEqual(meterEventRow(batch, ev1, m1.hits[1], m1.props).slice(0, 10), ['t', 'e', 'tokens', 'c', ev1.timestamp, 'e1', '3', '', 'api', []])
  assert.deepEqual(meterEventRow(batch, ev1, m1.hits[0], m1.props)[9], ['eu'])
  const minute = Date.parse('2026-10-01T00:00:00Z') / 1000
  assert.deepEqual(bucketRow(batch, ev1, m1.hits[0], m1.props), ['t', 'e', 'calls', 'c', minute, ['eu'], 'api', '1', 1, '1', [0, '', '0'], [], '', [], ''])
  assert.deepEqual(bucketRow(batch, ev1, m1.hits[1], m1.props).slice(5, 7), [[], 'api'])
  assert.equal(groupValue({ n: 5, o: { a: 1 } }, 'n'), '5')
  assert.equal(groupValue({ o: { a: 1 } }, 'o'), '{"a":1}')
  assert.equal(groupValue({}, 'x'), '')
  assert.equal(monthOf(Date.parse('2026-12-31T23:59:59.999Z')), 202612)
  assert.equal(monthOf(Date.parse('2027-01-01T00:00:00Z')), 202701)

  const k = eventDigest('t', 'e', 'e1')
  assert.deepEqual(eventDigest('t', 'e', 'e1'), k)
  assert.notDeepEqual(eventDigest('t', 'e2', 'e1'), k, 'the environment is part of the identity')
  assert.match(keyText(k), /^\d+$/)
  assert.equal(BigInt(keyText(k)) % 64n, BigInt(shardOf(k)), 'the shard is the key mod 64, as the store migration computes it')
  assert.ok(dedupVersion(1000) > dedupVersion(2000), 'an earlier ingestion has the larger version')
})

test('expression meters: exact value per event; missing or non-numeric operands skip the event', () => {
  const m = meter({ aggregation: { type: 'SUM', expression: 'input_tokens + 3 * output_tokens' } })
  // 1200 + 3 x 450 = 2550; numeric strings are read exactly: 0.1 + 3 x 0.2 = 0.7
  assert.deepEqual(meterValue(m, { input_tokens: 1200, output_tokens: 450 }), { value: '2550', text: '' })
  assert.deepEqual(meterValue(m, { input_tokens: '0.1', output_tokens: '0.2' }), { value: '0.7', text: '' })
  assert.deepEqual(meterValue(m, { input_tokens: 1 }), { skip: 'missing_field' })
  assert.deepEqual(meterValue(m, { input_tokens: 1, output_tokens: null }), { skip: 'missing_field' })
  assert.deepEqual(meterValue(m, { input_tokens: 1, output_tokens: 'many' }), { skip: 'non_numeric' })
  assert.deepEqual(meterValue(m, { input_tokens: 1, output_tokens: true }), { skip: 'non_numeric' })
  assert.deepEqual(meterValue(m, { input_tokens: 1, output_tokens: '0.0000000000001' }), { skip: 'inexact' })
  // nested paths, the multiplier after the expression: (2 + 8) / 4 x 0.5 = 1.25
  const nested = meter({ aggregation: { type: 'MAX', expression: '(usage.a + usage.b) / 4', multiplier: '0.5' } })
  assert.deepEqual(meterValue(nested, { usage: { a: 2, b: 8 } }), { value: '1.25', text: '' })
  // a division is rounded half-up to the stored 12 decimals: 2/3 = 0.666666666667
  const third = meter({ aggregation: { type: 'SUM', expression: 'a / 3' } })
  assert.deepEqual(meterValue(third, { a: 2 }), { value: '0.666666666667', text: '' })
  assert.deepEqual(meterValue(third, { a: 0 }), { value: '0', text: '' })
  assert.deepEqual(meterValue(meter({ aggregation: { type: 'SUM', expression: 'a / b' } }), { a: 1, b: 0 }), { skip: 'division_by_zero' })
  // a product beyond Decimal(38, 12) is out of range, not wrapped: 1e13 x 1e13 = 1e26
  assert.deepEqual(meterValue(meter({ aggregation: { type: 'SUM', expression: 'a * a' } }), { a: 1e13 }), { skip: 'out_of_range' })
})

test('WEIGHTED_SUM rows keep the point and the latest tuple', () => {
  const batch: IngestBatch = { batch_id: 'b', tenant_id: 't', environment_id: 'e', ingested_at: 0, events: [] }
  const ts = Date.parse('2026-11-03T10:15:30.250Z')
  const ev = { event_id: 'g1', event_name: 'call', external_customer_id: 'c', customer_id: null, timestamp: ts, source: null, properties: '{"gb":"12.5"}' }
  const index = indexMeters([meter({ id: 'storage', aggregation: { type: 'WEIGHTED_SUM', field: 'gb' } })])
  const hit = meterHits(index, 't', 'e', ev, {})!
  const row = bucketRow(batch, ev, hit.hits[0], hit.props)
  assert.deepEqual(row.slice(10), [[ts, 'g1', '12.5'], [], '', [[ts, 'g1', '12.5']], ''])
  assert.equal(row[4], Date.parse('2026-11-03T10:15:00Z') / 1000)
})
