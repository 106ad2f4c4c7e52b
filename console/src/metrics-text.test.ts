// The Health page's figures from Prometheus text.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { healthFigures, parseMetrics } from './metrics-text.js'

const TEXT = `# HELP meterline_ingest_events_accepted_total Events accepted
# TYPE meterline_ingest_events_accepted_total counter
meterline_ingest_events_accepted_total 1500
meterline_aggregator_events_consumed_total 1400
meterline_aggregator_lag_events{topic="events",partition="0"} 60
meterline_aggregator_lag_events{topic="events",partition="1"} 40
meterline_aggregator_lag_seconds{topic="events",partition="0"} 0
meterline_aggregator_lag_seconds{topic="events",partition="1"} 2.5
meterline_usage_freshness_seconds_bucket{le="0.1"} 1
meterline_usage_freshness_seconds_bucket{le="0.5"} 60
meterline_usage_freshness_seconds_bucket{le="1"} 99
meterline_usage_freshness_seconds_bucket{le="5"} 100
meterline_usage_freshness_seconds_bucket{le="+Inf"} 100
meterline_usage_freshness_seconds_sum 1.2
meterline_usage_freshness_seconds_count 100
meterline_spool_bytes 2048
meterline_spool_oldest_unforwarded_age_seconds 0.75
meterline_http_request_duration_seconds_count{route="/v1/x",label="a \\"quoted\\" one"} 9
`

test('parseMetrics: names, labels (escaped quotes too) and values; comments skipped', () => {
  const s = parseMetrics(TEXT)
  assert.equal(s.length, 16)
  assert.deepEqual(s[2], { name: 'meterline_aggregator_lag_events', labels: { topic: 'events', partition: '0' }, value: 60 })
  assert.deepEqual(s[15].labels, { route: '/v1/x', label: 'a "quoted" one' })
})

test('healthFigures: counters, lag summed over partitions and the worst partition, freshness quantile bounds, spool', () => {
  assert.deepEqual(healthFigures(parseMetrics(TEXT)), {
    eventsAccepted: 1500, eventsConsumed: 1400, lagEvents: 100, lagSeconds: 2.5, freshnessP50Seconds: 0.5, freshnessP99Seconds: 1, spoolBytes: 2048, spoolOldestUnforwardedSeconds: 0.75,
  })
  assert.equal(healthFigures([]).freshnessP50Seconds, null)
  const slow = parseMetrics('meterline_usage_freshness_seconds_bucket{le="3600"} 1\nmeterline_usage_freshness_seconds_bucket{le="+Inf"} 4\n')
  assert.equal(healthFigures(slow).freshnessP50Seconds, Infinity)
})
