import { test } from 'node:test'
import assert from 'node:assert/strict'
import { buildRows, dedupVersion, indexMeters, matchesFilters, meterValue, readProperty, type BuiltRows, type MeterDefinition } from './meter-rows.js'

const meter = (over: Partial<MeterDefinition> & { aggregation: MeterDefinition['aggregation'] }): MeterDefinition => ({
  id: 'm', tenant_id: 't', environment_id: 'e', event_name: 'call', filters: [], ...over,
})

test('values: numbers and numeric strings keep their digits; multiplier and 12-digit scale are exact', () => {
  const sum = meter({ aggregation: { type: 'SUM', field: 'n' } })
  assert.deepEqual(meterValue(sum, { n: 0.1 }), { value: '0.1', text: '' })
  assert.deepEqual(meterValue(sum, { n: '123456789012345.123456789' }), { value: '123456789012345.123456789', text: '' })
  assert.deepEqual(meterValue(sum, { n: ' 7 ' }), { value: '7', text: '' })
  assert.deepEqual(meterValue(sum, { n: '0.0000000000005' }), { value: '0.000000000001', text: '' }, 'half-up at 12 decimals')
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

test('buildRows: raw rows for every event, meter rows per matching meter, earliest ingestion wins merges', () => {
  const index = indexMeters([
    meter({ id: 'calls', aggregation: { type: 'COUNT' } }),
    meter({ id: 'tokens', aggregation: { type: 'SUM', field: 'tokens' } }),
    meter({ id: 'other-env', environment_id: 'e2', aggregation: { type: 'COUNT' } }),
  ])
  const out: BuiltRows = { raw: [], meter: [], skipped: {} }
  buildRows(
    {
      batch_id: 'b', tenant_id: 't', environment_id: 'e', ingested_at: Date.parse('2026-10-01T00:00:00.500Z'),
      events: [
        { event_id: 'e1', event_name: 'call', external_customer_id: 'c', customer_id: null, timestamp: Date.parse('2026-10-01T00:00:00Z'), source: 'api', properties: '{"tokens":3,"region":"eu"}' },
        { event_id: 'e2', event_name: 'call', external_customer_id: 'c', customer_id: null, timestamp: Date.parse('2026-10-01T00:00:00Z'), source: null, properties: '{}' },
        { event_id: 'e3', event_name: 'other', external_customer_id: 'c', customer_id: null, timestamp: Date.parse('2026-10-01T00:00:00Z'), source: null, properties: '{}' },
      ],
    },
    index,
    out,
  )
  assert.equal(out.raw.length, 3)
  assert.deepEqual(out.meter.map((r) => [r[2], r[3], r[6]]), [['calls', 'e1', '1'], ['tokens', 'e1', '3'], ['calls', 'e2', '1']])
  assert.equal(out.meter[0][9], '{"tokens":3,"region":"eu"}')
  assert.equal(out.meter[0][5], Date.parse('2026-10-01T00:00:00Z'))
  assert.deepEqual(out.skipped, { missing_field: 1 })
  assert.ok(dedupVersion(1000) > dedupVersion(2000), 'an earlier ingestion has the larger version')
})
