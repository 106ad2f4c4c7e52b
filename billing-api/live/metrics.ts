// Metrics of live access (cache, counters, spend caps).
import client from 'prom-client'
import { registry } from '../../platform/metrics.js'

export const liveCacheEvents = new client.Counter({
  name: 'meterline_live_cache_events_total',
  help: 'Live check cache: misses, invalidations and lookups of customers known to have no record, by kind',
  labelNames: ['event'],
  registers: [registry],
})

export const liveCounterEvents = new client.Counter({
  name: 'meterline_live_counter_events_total',
  help: 'Live usage counters: writes applied, duplicates skipped, loads, rebases, resets',
  labelNames: ['event'],
  registers: [registry],
})

export const liveUsageStaleness = new client.Gauge({
  name: 'meterline_live_usage_as_of_age_seconds',
  help: 'Age of the newest usage_as_of this process heard from the aggregator',
  registers: [registry],
})

export const spendCapsFired = new client.Counter({
  name: 'meterline_spend_caps_fired_total',
  help: 'Hard limits crossed and fired (feature.usage_limit_reached, wallet.balance_depleted)',
  labelNames: ['kind'],
  registers: [registry],
})

export const liveCounterReadSeconds = new client.Histogram({
  name: 'meterline_live_counter_read_seconds',
  help: 'Bucket reads of the live counters: one counter, a whole scope (meter x reset period), or the doubtful customers of a scope read again',
  labelNames: ['kind'],
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
})
