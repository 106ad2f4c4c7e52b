import { test } from 'node:test'
import assert from 'node:assert/strict'
import { MetricLabels, fnv1a } from './metric-labels.js'

test('FNV-1a matches the published test vectors', () => {
  assert.equal(fnv1a(''), 0x811c9dc5)
  assert.equal(fnv1a('a'), 0xe40c292c)
  assert.equal(fnv1a('foobar'), 0xbf9cf968)
})

test('allow-listed tenants keep their id; the others fall into a fixed set of buckets', () => {
  const labels = new MetricLabels({ tenantAllowlist: ['tnt_big'], tenantBuckets: 4, metersPerTenant: 2 })
  assert.equal(labels.tenant('tnt_big'), 'tnt_big')
  // fnv1a('a') = 0xe40c292c = 3826002220; mod 4 = 0. fnv1a('foobar') = 3214735720; mod 4 = 0.
  assert.equal(labels.tenant('a'), 'other_00')
  const seen = new Set(Array.from({ length: 1000 }, (_, i) => labels.tenant(`tnt_${i}`)))
  assert.deepEqual([...seen].sort(), ['other_00', 'other_01', 'other_02', 'other_03'])
  assert.equal(labels.tenant('tnt_7'), labels.tenant('tnt_7'), 'stable')
  assert.equal(new MetricLabels({ tenantAllowlist: [], tenantBuckets: 0, metersPerTenant: 2 }).tenant('x'), 'other')
})

test('meters are labelled for allow-listed tenants only, up to the limit', () => {
  const labels = new MetricLabels({ tenantAllowlist: ['tnt_big'], tenantBuckets: 4, metersPerTenant: 2 })
  assert.equal(labels.meter('tnt_big', 'm1'), 'm1')
  assert.equal(labels.meter('tnt_big', 'm2'), 'm2')
  assert.equal(labels.meter('tnt_big', 'm3'), 'other', 'the third meter is beyond the limit')
  assert.equal(labels.meter('tnt_big', 'm1'), 'm1', 'a meter seen before keeps its label')
  assert.equal(labels.meter('tnt_small', 'm1'), 'other')
})
