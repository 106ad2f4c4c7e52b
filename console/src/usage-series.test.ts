// The chart's series from usage windows: aligned x axis, one series per group, exact sums.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { groupLabel, usageSeries } from './usage-series.js'

test('usageSeries: windows in time order, a series per group with gaps as null, exact decimal sums', () => {
  const s = usageSeries([
    { window_start: '2026-10-10T00:00:00.000Z', value: '0.2', event_count: 1, group_by: { region: 'us' } },
    { window_start: '2026-10-03T00:00:00.000Z', value: '0.1', event_count: 2, group_by: { region: 'eu' } },
    { window_start: '2026-10-10T00:00:00.000Z', value: '12345678901234.567890123456', event_count: 1, group_by: { region: 'eu' } },
  ])
  assert.deepEqual(s.xs, [Date.parse('2026-10-03T00:00:00Z') / 1000, Date.parse('2026-10-10T00:00:00Z') / 1000])
  assert.deepEqual(s.series.map((x) => [x.label, x.values, x.sum]), [
    ['region=eu', [0.1, Number('12345678901234.567890123456')], '12345678901234.667890123456'],
    ['region=us', [null, 0.2], '0.2'],
  ])
  // 0.1 + 0.2 is 0.3 here, not 0.30000000000000004
  assert.equal(s.sum, '12345678901234.867890123456')
  assert.equal(usageSeries([{ window_start: '2026-10-03T00:00:00Z', value: '0.1', event_count: 1 }, { window_start: '2026-10-04T00:00:00Z', value: '0.2', event_count: 1 }]).sum, '0.3')
})

test('usageSeries: a total without windows draws nothing; labels name the groups', () => {
  assert.deepEqual(usageSeries([{ window_start: null, value: '5', event_count: 1 }]), { xs: [], series: [], sum: '0' })
  assert.equal(groupLabel(null), 'usage')
  assert.equal(groupLabel({ region: 'eu', model: 'small' }), 'region=eu, model=small')
})
