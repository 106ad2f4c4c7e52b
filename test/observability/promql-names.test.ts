import { test } from 'node:test'
import assert from 'node:assert/strict'
import { isDeclared, metricNames } from './promql-names.js'

test('metric names are read from expressions, not functions, labels or keywords', () => {
  assert.deepEqual(
    metricNames('histogram_quantile(0.99, sum by (le, job_name) (rate(meterline_scheduler_job_duration_seconds_bucket[$__rate_interval])))'),
    ['meterline_scheduler_job_duration_seconds_bucket'],
  )
  assert.deepEqual(metricNames('sum by (job) (process_resident_memory_bytes) / clamp_min(sum(rate(meterline_a_total{x="y"}[5m])), 1)'), ['process_resident_memory_bytes', 'meterline_a_total'])
  assert.deepEqual(metricNames('up{job=~"ingest|aggregator"} == 0'), ['up'])
  assert.deepEqual(metricNames('sum(rate(meterline_x_total[5m])) / sum(rate(meterline_x_total[5m]))'), ['meterline_x_total'])
})

test('histogram series count as declared through their family', () => {
  const declared = new Map([['meterline_h_seconds', 'histogram'], ['meterline_c_total', 'counter']])
  assert.equal(isDeclared('meterline_h_seconds_bucket', declared), true)
  assert.equal(isDeclared('meterline_h_seconds_count', declared), true)
  assert.equal(isDeclared('meterline_c_total', declared), true)
  assert.equal(isDeclared('meterline_c_total_count', declared), false)
  assert.equal(isDeclared('meterline_missing_total', declared), false)
  assert.equal(isDeclared('up', declared), true)
})
